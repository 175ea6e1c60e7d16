// createEmbedder, from the embedder configuration (embedder_config.ts; the
// Embedder port is in model.ts). Implementations: a
// built-in feature-hashing embedder that needs no download
// (embedder_builtin.ts), and clients for OpenAI-compatible (`/v1/embeddings`)
// and Ollama (`/api/embed`) servers (embedder_remote.ts, embedder_http.ts).

import type { Embedder } from "./model.ts";
import { EmbedderConfig } from "./embedder_config.ts";
import { BuiltinEmbedder } from "./embedder_builtin.ts";
import {
  DEFAULT_OPENAI_URL,
  OllamaEmbedder,
  OpenAiEmbedder,
  trimSlash,
} from "./embedder_remote.ts";

export { EmbedderConfig };

export function createEmbedder(
  config: EmbedderConfig,
  env: Record<string, string | undefined>,
): Embedder {
  const remote = {
    timeoutMs: config.embedder_timeout_ms,
    batchSize: config.embedder_batch_size,
  };
  switch (config.embedder) {
    case "builtin":
      return new BuiltinEmbedder();
    case "ollama":
      return new OllamaEmbedder({
        ...remote,
        host: config.embedder_url ?? env.OLLAMA_HOST,
        model: config.embedder_model ?? "nomic-embed-text",
      });
    case "openai": {
      const baseUrl = trimSlash(config.embedder_url ?? DEFAULT_OPENAI_URL);
      try {
        new URL(baseUrl);
      } catch {
        throw new Error(
          `embedder_url "${baseUrl}" is not a URL; expected e.g. ${DEFAULT_OPENAI_URL}`,
        );
      }
      const apiKey = env[config.embedder_key_env] || undefined;
      // Local OpenAI-compatible servers (vLLM, llama.cpp) usually need no key.
      if (!apiKey && baseUrl === DEFAULT_OPENAI_URL) {
        throw new Error(
          `The openai embedder needs an API key: set ${config.embedder_key_env} ` +
            "(or name another variable with embedder_key_env)",
        );
      }
      return new OpenAiEmbedder({
        ...remote,
        baseUrl,
        apiKey,
        model: config.embedder_model ?? "text-embedding-3-small",
      });
    }
  }
}
