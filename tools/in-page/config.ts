// The in-page config section; its scalar keys are also `agentd mcp in-page`
// flags (`relay_port` → `--relay-port`).

import { z } from "zod";

/** The id Chrome derives from the `key` in extension/manifest.json. */
export const PINNED_EXTENSION_ID = "eeoojfhbanoblidiglnjkghihkpghbig";

export const InPageConfig = z.object({
  relay_port: z.number().int().min(0).max(65535).default(0)
    .describe(
      "Loopback port the native host connects to (0: any free port, written to <data dir>/in-page/relay.json)",
    ),
  extension_ids: z.array(z.string().regex(/^[a-p]{32}$/)).default([
    PINNED_EXTENSION_ID,
  ])
    .describe(
      "Extension ids allowed to pair (the pinned agentd extension by default)",
    ),
  call_timeout_ms: z.number().int().min(1000).max(600_000).default(30_000)
    .describe("How long one call waits for the extension's answer"),
  connect_wait_ms: z.number().int().min(0).max(600_000).default(10_000)
    .describe(
      "How long a call waits for the extension to (re)connect before failing",
    ),
  text_budget: z.number().int().min(1000).max(1_000_000).default(20_000)
    .describe("Characters of DOM, text or entries per result"),
});
export type InPageConfig = z.output<typeof InPageConfig>;
