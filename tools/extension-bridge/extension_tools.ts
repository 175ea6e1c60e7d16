// The reading tools: list_extensions, get_extension_state,
// get_extension_permissions.

import { z } from "zod";
import type { Browser } from "../../platform/puppeteer.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import { actionNames } from "./actions.ts";
import type { ExtensionBridge } from "./bridge.ts";
import {
  entryJson,
  type ExtensionEntry,
  extensionId,
  ExtensionOut,
  listExtensions,
} from "./catalog.ts";
import { manifestAt, manifestPermissions, strings } from "./manifest.ts";

const tool = toolDefiner<ExtensionBridge>();

/** The catalog entry of one extension; a clear error naming the known ids when absent. */
async function findExtension(
  bridge: ExtensionBridge,
  browser: Browser,
  id: string,
): Promise<ExtensionEntry> {
  const { entries } = await listExtensions(bridge, browser);
  const found = entries.find((entry) => entry.id === id);
  if (found) return found;
  const known = entries.map((entry) => `${entry.id} (${entry.name ?? "?"})`);
  throw new ToolError(
    `extension_id: no extension ${id} in this browser; known: ${
      known.length ? known.join(", ") : "none"
    }`,
  );
}

/** The manifest, from the running extension or its folder; {} when neither answers. */
async function manifestOf(
  bridge: ExtensionBridge,
  browser: Browser,
  entry: ExtensionEntry,
): Promise<Record<string, unknown>> {
  if (entry.enabled) {
    const live = await bridge.evaluate(
      browser,
      entry.id,
      "() => chrome.runtime.getManifest()",
      null,
    ).catch(() => undefined);
    if (typeof live === "object" && live !== null && !Array.isArray(live)) {
      return { ...live };
    }
  }
  return (entry.path !== null ? await manifestAt(entry.path) : undefined) ?? {};
}

export const listExtensionsTool = tool({
  name: "list_extensions",
  title: "List extensions",
  touches: [],
  description:
    "List the browser's installed extensions: id, name, version, enabled, permissions, host permissions, running contexts. Every installed extension appears when the companion (an extension with the management permission) runs; otherwise unpacked and running ones.",
  input: z.object({
    enabled_only: z.boolean().optional().describe(
      "Only enabled extensions (default false: all)",
    ),
  }),
  output: z.object({
    count: z.number().int(),
    companion_id: z.string().nullable(),
    extensions: z.array(ExtensionOut),
  }),
  annotations: { readOnlyHint: true },
  handle(bridge, { enabled_only }) {
    return bridge.counted("list_extensions", async () => {
      const browser = await bridge.browser();
      const { entries, companion } = await listExtensions(bridge, browser);
      const shown = enabled_only
        ? entries.filter((entry) => entry.enabled)
        : entries;
      return json({
        count: shown.length,
        companion_id: companion,
        extensions: shown.map(entryJson),
      });
    });
  },
});

export const getExtensionState = tool({
  name: "get_extension_state",
  title: "Read extension state",
  touches: [],
  description:
    "Current state of one extension: enabled, version, manifest, its service worker (running or idle) and other open contexts, and the actions execute_extension_action offers for it.",
  input: z.object({ extension_id: extensionId }),
  output: z.object({
    ...ExtensionOut.shape,
    manifest_version: z.number().nullable(),
    service_worker: z.object({
      script: z.string().nullable(),
      running: z.boolean(),
      url: z.string().nullable(),
    }),
    actions: z.array(z.string()),
    // The extension's manifest.json as it is.
    manifest: z.looseObject({}),
  }),
  annotations: { readOnlyHint: true },
  handle(bridge, { extension_id }) {
    return bridge.counted("get_extension_state", async () => {
      const browser = await bridge.browser();
      const entry = await findExtension(bridge, browser, extension_id);
      const manifest = await manifestOf(bridge, browser, entry);
      const actions = entry.enabled
        ? await actionNames(bridge, browser, entry.id)
        : [];
      const worker = bridge.workerTarget(browser, entry.id);
      const background = typeof manifest.background === "object" &&
          manifest.background !== null &&
          "service_worker" in manifest.background
        ? String(manifest.background.service_worker)
        : null;
      return json({
        ...entryJson(entry),
        manifest_version: typeof manifest.manifest_version === "number"
          ? manifest.manifest_version
          : null,
        service_worker: {
          script: background,
          running: worker !== undefined,
          url: worker?.url() ?? null,
        },
        actions,
        manifest: toJsonObject(manifest),
      });
    });
  },
});

export const getExtensionPermissions = tool({
  name: "get_extension_permissions",
  title: "Read extension permissions",
  touches: [],
  description:
    "Permissions of one extension: declared in its manifest (required and optional API permissions, host permissions) and granted now (chrome.permissions.getAll in the extension; null while disabled).",
  input: z.object({ extension_id: extensionId }),
  output: z.object({
    extension_id: z.string(),
    name: z.string().nullable(),
    enabled: z.boolean(),
    permissions: z.array(z.string()),
    host_permissions: z.array(z.string()),
    optional_permissions: z.array(z.string()),
    optional_host_permissions: z.array(z.string()),
    // chrome.permissions.getAll() in the extension; null while disabled.
    granted: z.object({
      permissions: z.array(z.string()),
      origins: z.array(z.string()),
    }).nullable(),
    management: z.object({
      permissions: z.array(z.string()),
      host_permissions: z.array(z.string()),
    }).nullable(),
  }),
  annotations: { readOnlyHint: true },
  handle(bridge, { extension_id }) {
    return bridge.counted("get_extension_permissions", async () => {
      const browser = await bridge.browser();
      const entry = await findExtension(bridge, browser, extension_id);
      const manifest = await manifestOf(bridge, browser, entry);
      const declared = manifestPermissions(manifest);
      let granted: JsonValue = null;
      if (entry.enabled) {
        const all = await bridge.evaluate(
          browser,
          entry.id,
          "async () => { const p = await chrome.permissions.getAll(); return { permissions: p.permissions ?? [], origins: p.origins ?? [] }; }",
          null,
        );
        granted = all;
      }
      return json({
        extension_id: entry.id,
        name: entry.name,
        enabled: entry.enabled,
        permissions: declared.permissions,
        host_permissions: declared.host_permissions,
        optional_permissions: strings(manifest.optional_permissions),
        optional_host_permissions: strings(manifest.optional_host_permissions),
        granted,
        management: entry.sources.includes("management")
          ? {
            permissions: entry.permissions,
            host_permissions: entry.host_permissions,
          }
          : null,
      });
    });
  },
});

function toJsonObject(
  value: Record<string, unknown>,
): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = JSON.parse(JSON.stringify(value));
  return out;
}
