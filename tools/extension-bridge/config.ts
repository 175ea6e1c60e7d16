// The extension-bridge config section; its scalar keys are also
// `agentd mcp extension-bridge` flags (`cdp_port` → `--cdp-port`).

import { z } from "zod";

/** Reads only: `Runtime.evaluate` and anything that changes the browser stay off until listed. */
export const DEFAULT_CDP_ALLOW: readonly string[] = [
  "Browser.getVersion",
  "Target.getTargets",
  "Target.getTargetInfo",
  "Target.getBrowserContexts",
  "Extensions.getExtensions",
  "SystemInfo.getInfo",
];

const cdpMethod = z.string().regex(/^[A-Z][A-Za-z]*\.([a-z][A-Za-z]*|\*)$/, {
  message: "a CDP method is Domain.method, or Domain.* for a whole domain",
});

export const ExtensionBridgeConfig = z.object({
  cdp_port: z.number().int().min(1).max(65535).default(9335)
    .describe(
      "Debugging port of the browser to attach to (started with --remote-debugging-port)",
    ),
  cdp_allow: z.array(cdpMethod).default([...DEFAULT_CDP_ALLOW])
    .describe(
      "CDP methods bridge_cdp_command may send (Domain.method or Domain.*); default: reads only",
    ),
  companion_id: z.string().regex(/^[a-p]{32}$/, {
    message: "an extension id is 32 letters a-p",
  }).optional()
    .describe(
      "Extension whose chrome.management lists the others (default: the first running one with the management permission)",
    ),
  call_timeout_ms: z.number().int().min(500).max(600_000).default(10_000)
    .describe(
      "Upper bound of one browser call, including waking an idle service worker",
    ),
});
export type ExtensionBridgeConfig = z.output<typeof ExtensionBridgeConfig>;

/** Whether `method` is listed itself or through its `Domain.*` entry. */
export function cdpAllowed(method: string, allow: readonly string[]): boolean {
  const domain = method.split(".")[0];
  return allow.includes(method) || allow.includes(`${domain}.*`);
}
