// execute_extension_action: one action run inside an extension's service
// worker (Runtime.evaluate on its target), built-in (actions.ts) or the
// extension's own when it offers the companion interface (see README).

import { z } from "zod";
import type { JsonValue } from "../../platform/store/mod.ts";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import type { ExtensionBridge } from "./bridge.ts";
import { extensionId } from "./catalog.ts";
import { withoutDaemonCookies } from "./own_origin.ts";
import { BUILTIN_ACTIONS, CUSTOM_NAMES, RUN_CUSTOM } from "./actions.ts";

const tool = toolDefiner<ExtensionBridge>();

export const executeExtensionAction = tool({
  name: "execute_extension_action",
  title: "Run extension action",
  touches: ["page-script", "cookies-storage"],
  description:
    `Run a named action in an extension's service worker, with the extension's own permissions. Built-in: ${
      Object.entries(BUILTIN_ACTIONS).map(([name, action]) =>
        `${name} (${action.description})`
      ).join("; ")
    }. An extension may add its own actions (globalThis.agentdBridge.actions); get_extension_state lists them. The extension's own action of the same name wins.`,
  input: z.object({
    extension_id: extensionId,
    action: z.string().min(1).max(200).describe("Action name"),
    args: z.record(z.string(), z.json()).optional().describe(
      "Arguments of the action (an object)",
    ),
  }),
  output: z.object({
    extension_id: z.string(),
    action: z.string(),
    via: z.enum(["builtin", "extension"]),
    // Whatever the action returned (any JSON).
    result: z.unknown(),
  }),
  handle(bridge, { extension_id, action, args }) {
    return bridge.counted("execute_extension_action", async () => {
      const browser = await bridge.browser();
      const custom = await bridge.evaluate(
        browser,
        extension_id,
        CUSTOM_NAMES,
        null,
      );
      const customNames = Array.isArray(custom) ? custom : [];
      let result: JsonValue;
      let via: string;
      if (customNames.includes(action)) {
        result = await bridge.evaluate(browser, extension_id, RUN_CUSTOM, {
          action,
          args: args ?? {},
        });
        via = "extension";
      } else {
        const builtin = Object.hasOwn(BUILTIN_ACTIONS, action)
          ? BUILTIN_ACTIONS[action]
          : undefined;
        if (builtin === undefined) {
          throw new ToolError(
            `action: unknown action "${action}" for extension ${extension_id}; available: ${
              [...Object.keys(BUILTIN_ACTIONS), ...customNames].join(", ")
            }`,
          );
        }
        const parsed = builtin.args.strict().safeParse(args ?? {});
        if (!parsed.success) {
          throw new ToolError(
            `args: invalid for ${action}: ${
              parsed.error.issues.map((issue) =>
                `${issue.path.join(".") || "(args)"}: ${issue.message}`
              ).join("; ")
            }`,
          );
        }
        result = await bridge.evaluate(
          browser,
          extension_id,
          builtin.code,
          JSON.parse(JSON.stringify(parsed.data)),
        );
        via = "builtin";
      }
      bridge.log.info("extension_action", {
        extension_id,
        action,
        via,
      });
      // An action with the cookies permission may list them all: the
      // daemon's session cookie is the operator's, never a tool's result.
      return json({
        extension_id,
        action,
        via,
        result: withoutDaemonCookies(result, bridge.ownOrigin()),
      });
    });
  },
});
