// The browser-automation config section; its scalar keys are also
// `agentd mcp browser-automation` flags (`cdp_port` → `--cdp-port`).

import { z } from "zod";

export const BrowserAutomationConfig = z.object({
  cdp_port: z.number().int().min(1).max(65535).default(9335)
    .describe(
      "Debugging port: attach to the browser listening there, else launch one on it",
    ),
  profile: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
    message: "a profile name is 1-64 letters, digits, '.', '_' or '-'",
  }).default("default")
    .describe("Profile of a launched browser: <data dir>/profiles/<name>"),
  executable: z.string().min(1).optional()
    .describe("Browser to launch (default: Chromium or Chrome found on PATH)"),
  headless: z.boolean().default(true)
    .describe("Launch without a window (false: a visible browser)"),
  // Unset: on under `agentd mcp browser-automation`, off inside `agentd serve`.
  launch_on_start: z.boolean().optional()
    .describe(
      "Attach or launch when the server starts instead of on the first tool call (default: on under agentd mcp, off inside agentd serve)",
    ),
  args: z.array(z.string()).default([])
    .describe("Extra command-line flags for a launched browser"),
  viewport_width: z.number().int().min(200).max(7680).default(1280)
    .describe("Viewport width of a launched browser's tabs"),
  viewport_height: z.number().int().min(200).max(4320).default(800)
    .describe("Viewport height of a launched browser's tabs"),
  screenshot_dirs: z.array(z.string().min(1)).optional()
    .describe(
      "Directories screenshot may write into (default: <data dir>/screenshots)",
    ),
  text_budget: z.number().int().min(1000).max(1_000_000).default(20_000)
    .describe("Characters of text or HTML per result; more is paged by offset"),
  image_budget: z.number().int().min(1000).max(50_000_000).default(512_000)
    .describe(
      "Bytes of PNG a screenshot returns inline; a bigger one becomes a resource of the session",
    ),
  results_max_bytes: z.number().int().min(1_000_000).max(4_000_000_000)
    .default(256_000_000)
    .describe(
      "Bytes of big results (HTML, screenshots) kept as resources; the oldest leave beyond",
    ),
  action_timeout_ms: z.number().int().min(1000).max(600_000).default(30_000)
    .describe("Timeout of navigations, scripts and any one browser call"),
  selector_timeout_ms: z.number().int().min(0).max(600_000).default(5_000)
    .describe("How long actions wait for a selector to match an element"),
  max_pages: z.number().int().min(1).max(256).default(16)
    .describe("Most tabs open at once (one per MCP session)"),
  page_idle_ms: z.number().int().min(10_000).default(1_800_000)
    .describe("A session's tab is closed after this long unused"),
});
export type BrowserAutomationConfig = z.output<typeof BrowserAutomationConfig>;
