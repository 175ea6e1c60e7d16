// The actions execute_extension_action runs in an extension's service
// worker: the built-in set over chrome.* APIs, and how the extension's own
// (globalThis.agentdBridge.actions) are listed and run.

import { z } from "zod";
import type { Browser } from "../../platform/puppeteer.ts";
import type { ExtensionBridge } from "./bridge.ts";

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
export const CUSTOM_NAMES =
  "() => { const a = globalThis.agentdBridge?.actions; return a && typeof a === 'object' ? Object.keys(a).filter((k) => typeof a[k] === 'function') : []; }";

export const RUN_CUSTOM =
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
