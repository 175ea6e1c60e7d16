// The memory config section; its scalar keys are also `agentd mcp memory`
// flags (`sync_interval_ms` → `--sync-interval-ms`).

import { z } from "zod";
import { EmbedderConfig } from "./embedder_config.ts";
import { DEFAULT_SENSITIVE_TAG } from "./defaults.ts";

export const MemoryConfig = z.object({
  storage: z.enum(["local", "hosted"]).default("local")
    .describe(
      "local: a Deno KV file; hosted: PostgreSQL, another agentd's memory or remote Deno KV, shared by several daemons",
    ),
  path: z.string().min(1).optional()
    .describe(
      "Directory of the local store (default: the data dir's shared store)",
    ),
  url: z.string().min(1).optional()
    .describe(
      "Hosted store: postgres://user@host:port/db, https://host/mcp/memory (another agentd), or https://… for KV Connect",
    ),
  key: z.string().min(1).optional()
    .describe(
      "Password (PostgreSQL), JWT (another agentd) or access token (KV Connect) of the hosted store",
    ),
  sensitive_tag: z.string().min(1).max(64).default(DEFAULT_SENSITIVE_TAG)
    .describe("Entries with this tag are encrypted at rest and never embedded"),
  sync_interval_ms: z.number().int().min(100).max(600_000).default(5000)
    .describe(
      "Hosted mode: first retry delay while the hosted store is unreachable",
    ),
  list_budget: z.number().int().min(1000).max(10_000_000).default(24_000)
    .describe(
      "list_memories text over this many characters becomes a summary plus a resource with the whole page",
    ),
  results_max_bytes: z.number().int().min(1_000_000).default(64_000_000)
    .describe(
      "Bytes of listing resources kept for all sessions; the oldest leave beyond",
    ),
  alert_webhook: z.url({ protocol: /^https?$/ }).optional()
    .describe(
      "Storage unavailable/recovered alerts are POSTed here as JSON (as the gateway's)",
    ),
  ...EmbedderConfig.shape,
});
export type MemoryConfig = z.output<typeof MemoryConfig>;
