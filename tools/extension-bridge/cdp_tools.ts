// bridge_cdp_command: one Chrome DevTools Protocol command on the browser
// target, only when the method is on the cdp_allow list.

import { z } from "zod";
import type { JsonValue } from "../../platform/store/mod.ts";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import type { ExtensionBridge } from "./bridge.ts";
import { cdpAllowed } from "./config.ts";
import {
  daemonReference,
  type TargetInfo,
  withoutDaemonCookies,
} from "./own_origin.ts";

const tool = toolDefiner<ExtensionBridge>();

export const bridgeCdpCommand = tool({
  name: "bridge_cdp_command",
  title: "Send CDP command",
  touches: ["page-script", "cookies-storage", "network-log"],
  description:
    "Send one Chrome DevTools Protocol command (Domain.method) to the browser target and return its result. Only methods on the extension-bridge setting cdp_allow run; the default allows reads (Browser.getVersion, Target.getTargets, Extensions.getExtensions, ...), not Runtime.evaluate. Commands that name agentd's own pages or session cookie are refused, and that cookie is left out of results.",
  input: z.object({
    command: z.string().regex(/^[A-Z][A-Za-z]*\.[a-z][A-Za-z]*$/, {
      message: "a CDP command is Domain.method, e.g. Browser.getVersion",
    }).describe("CDP method, e.g. Target.getTargets"),
    params: z.record(z.string(), z.json()).optional().describe(
      "The command's parameters (an object)",
    ),
  }),
  output: z.object({
    command: z.string(),
    // The command's reply as the browser gave it (any JSON).
    result: z.unknown(),
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
      // agentd's own pages carry the operator's session: no command reaches
      // one, and its session cookie never leaves (platform/daemon_origin.ts).
      const daemon = bridge.ownOrigin();
      const named = params !== undefined && Object.keys(params).length > 0;
      const targets = named
        ? targetInfos(await bridge.send(browser, "Target.getTargets", {}))
        : [];
      const reference = daemonReference(params ?? {}, daemon, targets);
      if (reference !== undefined) {
        bridge.log.warn("cdp_command_refused", {
          command,
          reason: "daemon_origin",
        });
        throw new ToolError(
          `Refused: ${command} reaches agentd's own origin (${reference}). ` +
            "Its pages and its session cookie carry the operator's dashboard " +
            "session, so tools never act on them, for any caller; use " +
            "another target or site.",
        );
      }
      const result = withoutDaemonCookies(
        await bridge.send(browser, command, params ?? {}),
        daemon,
      );
      bridge.log.info("cdp_command", { command });
      return json({ command, result });
    });
  },
});

/** The targets of a Target.getTargets reply. */
function targetInfos(reply: JsonValue): TargetInfo[] {
  if (typeof reply !== "object" || reply === null || Array.isArray(reply)) {
    return [];
  }
  const infos = reply.targetInfos;
  if (!Array.isArray(infos)) return [];
  return infos.flatMap((info) =>
    typeof info === "object" && info !== null && !Array.isArray(info) &&
      typeof info.targetId === "string" && typeof info.url === "string"
      ? [{ targetId: info.targetId, url: info.url }]
      : []
  );
}
