// The embedder configuration and createEmbedder (the Embedder port is in
// model.ts). Implementations: a
// built-in feature-hashing embedder that needs no download
// (embedder_builtin.ts), and clients for OpenAI-compatible (`/v1/embeddings`)
// and Ollama (`/api/embed`) servers (embedder_remote.ts, embedder_http.ts).

import { z } from "zod";
import type { Embedder } from "./model.ts";
import { BuiltinEmbedder } from "./embedder_builtin.ts";
import {
  DEFAULT_OPENAI_URL,
  OllamaEmbedder,
  OpenAiEmbedder,
  trimSlash,
} from "./embedder_remote.ts";

// ---- configuration ----------------------------------------------------------------

/** Flat keys of the memory server's config section (and `agentd mcp memory` flags). */
export const EmbedderConfig = z.object({
  embedder: z.enum(["builtin", "openai", "ollama"]).default("builtin")
    .describe(
      "builtin (no download), openai (any OpenAI-compatible /v1/embeddings) or ollama",
    ),
  embedder_model: z.string().min(1).optional()
    .describe(
      "Model; default text-embedding-3-small (openai) or nomic-embed-text (ollama)",
    ),
  embedder_url: z.string().min(1).optional()
    .describe(
      "openai: base URL (default https://api.openai.com/v1); ollama: host (default OLLAMA_HOST)",
    ),
  // The key itself never goes in config, only the name of the variable holding it.
  embedder_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    error: "expected an environment variable name",
  }).default("OPENAI_API_KEY")
    .describe(
      "Environment variable holding the API key (default OPENAI_API_KEY)",
    ),
  embedder_timeout_ms: z.number().int().min(1).max(600_000).default(30_000)
    .describe("Timeout per embedding request"),
  embedder_batch_size: z.number().int().min(1).max(2048).default(64)
    .describe("Texts per embedding request"),
});
export type EmbedderConfig = z.output<typeof EmbedderConfig>;

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
