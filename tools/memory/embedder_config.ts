// The embedder's configuration keys, apart from the embedders (embedder.ts):
// the memory config section (config.ts) is read at an idle daemon's start,
// the embedders load with the server.

import { z } from "zod";

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
