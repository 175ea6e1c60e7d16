// Actions run inside an extension's service worker (Runtime.evaluate on its
// target): a built-in set over chrome.* APIs the extension was granted, plus
// the extension's own actions when it offers the companion interface
// (globalThis.agentdBridge.actions, see README).

import { z } from "zod";
import type { Browser } from "../../platform/puppeteer.ts";
import type { JsonValue } from "../../platform/store.ts";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import type { ExtensionBridge } from "./bridge.ts";
import { extensionId } from "./catalog.ts";
import { withoutDaemonCookies } from "./own_origin.ts";

const tool = toolDefiner<ExtensionBridge>();

const area = z.enum(["local", "sync", "session"]).default("local");
const keys = z.union([z.string(), z.array(z.string())]);

interface BuiltinAction {
  description: string;
  args: z.ZodObject;
  /** A one-argument function run in the service worker; `a` is the validated args. */
  code: string;
}

/** Throws the browser's own refusal as a message naming the missing permission. */
const need = (api: string, permission: string) =>
  `if (!(${api})) throw new Error("the extension lacks the '${permission}' permission (the browser's permission model applies)");`;

export const BUILTIN_ACTIONS: Readonly<Record<string, BuiltinAction>> = {
  get_manifest: {
    description: "The extension's manifest (chrome.runtime.getManifest)",
    args: z.object({}),
    code: "() => chrome.runtime.getManifest()",
  },
  storage_get: {
    description:
      "Read chrome.storage: {area?: local|sync|session, keys?: string|string[]} (all keys when absent)",
    args: z.object({ area, keys: keys.optional() }),
    code: `async (a) => { ${
      need("chrome.storage", "storage")
    } return await chrome.storage[a.area].get(a.keys ?? null); }`,
  },
  storage_set: {
    description: "Write chrome.storage: {area?, items: {key: value}}",
    args: z.object({ area, items: z.record(z.string(), z.json()) }),
    code: `async (a) => { ${
      need("chrome.storage", "storage")
    } await chrome.storage[a.area].set(a.items); return { written: Object.keys(a.items) }; }`,
  },
  storage_remove: {
    description: "Remove keys from chrome.storage: {area?, keys}",
    args: z.object({ area, keys }),
    code: `async (a) => { ${
      need("chrome.storage", "storage")
    } await chrome.storage[a.area].remove(a.keys); return { removed: a.keys }; }`,
  },
  set_enabled: {
    description:
      "Enable or disable another extension (chrome.management.setEnabled): {extension_id, enabled}",
    args: z.object({
      extension_id: z.string().regex(/^[a-p]{32}$/),
      enabled: z.boolean(),
    }),
    code: `async (a) => { ${
      need("chrome.management?.setEnabled", "management")
    } await chrome.management.setEnabled(a.extension_id, a.enabled); const e = await chrome.management.get(a.extension_id); return { extension_id: e.id, enabled: e.enabled }; }`,
  },
  list_content_scripts: {
    description:
      "Content scripts registered at run time (chrome.scripting.getRegisteredContentScripts)",
    args: z.object({}),
    code: `async () => { ${
      need("chrome.scripting?.getRegisteredContentScripts", "scripting")
    } return await chrome.scripting.getRegisteredContentScripts(); }`,
  },
  unregister_content_scripts: {
    description:
      "Remove content scripts registered at run time: {ids?: string[]} (all when absent)",
    args: z.object({ ids: z.array(z.string()).optional() }),
    code: `async (a) => { ${
      need("chrome.scripting", "scripting")
    } await chrome.scripting.unregisterContentScripts(a.ids ? { ids: a.ids } : undefined); return { unregistered: a.ids ?? "all" }; }`,
  },
  reload: {
    description:
      "Reload the extension (chrome.runtime.reload), shortly after answering",
    args: z.object({}),
    code:
      "() => { setTimeout(() => chrome.runtime.reload(), 50); return { reloading: true }; }",
  },
};

/** The extension's own actions: names under globalThis.agentdBridge.actions. */
const CUSTOM_NAMES =
  "() => { const a = globalThis.agentdBridge?.actions; return a && typeof a === 'object' ? Object.keys(a).filter((k) => typeof a[k] === 'function') : []; }";

const RUN_CUSTOM =
  "async (a) => await globalThis.agentdBridge.actions[a.action](a.args)";

/** Built-in action names, then the extension's own. */
export async function actionNames(
  bridge: ExtensionBridge,
  browser: Browser,
  id: string,
): Promise<string[]> {
  const custom = await bridge.evaluate(browser, id, CUSTOM_NAMES, null).catch(
    () => [],
  );
  const names = [...Object.keys(BUILTIN_ACTIONS)];
  for (const name of Array.isArray(custom) ? custom : []) {
    if (typeof name === "string") names.push(name);
  }
  return names;
}

export const executeExtensionAction = tool({
  name: "execute_extension_action",
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
