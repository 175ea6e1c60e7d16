// bridge_cdp_command: one Chrome DevTools Protocol command on the browser
// target, only when the method is on the cdp_allow list.

import { z } from "zod";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import type { ExtensionBridge } from "./bridge.ts";

const tool = toolDefiner<ExtensionBridge>();

/** Whether `method` is listed itself or through its `Domain.*` entry. */
export function cdpAllowed(method: string, allow: readonly string[]): boolean {
  const domain = method.split(".")[0];
  return allow.includes(method) || allow.includes(`${domain}.*`);
}

export const bridgeCdpCommand = tool({
  name: "bridge_cdp_command",
  touches: ["page-script", "cookies-storage", "network-log"],
  description:
    "Send one Chrome DevTools Protocol command (Domain.method) to the browser target and return its result. Only methods on the extension-bridge setting cdp_allow run; the default allows reads (Browser.getVersion, Target.getTargets, Extensions.getExtensions, ...), not Runtime.evaluate.",
  input: z.object({
    command: z.string().regex(/^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*$/, {
      message: "a CDP command is Domain.method, e.g. Browser.getVersion",
    }).describe("CDP method, e.g. Target.getTargets"),
    params: z.record(z.string(), z.json()).optional().describe(
      "The command's parameters (an object)",
    ),
  }),
  handle(bridge, { command, params }) {
    return bridge.counted("bridge_cdp_command", async () => {
      if (!cdpAllowed(command, bridge.config.cdp_allow)) {
        bridge.log.warn("cdp_command_refused", { command });
        throw new ToolError(
          `command: ${command} is not allowed by the extension-bridge setting cdp_allow ` +
            `(allowed: ${bridge.config.cdp_allow.join(", ") || "none"}). ` +
            `Add "${command}" or "${
              command.split(".")[0]
            }.*" to cdp_allow in the extension-bridge config section to permit it.`,
        );
      }
      const browser = await bridge.browser();
      const result = await bridge.send(browser, command, params ?? {});
      bridge.log.info("cdp_command", { command });
      return json({ command, result });
    });
  },
});
