// Which extensions the browser has, merged from three views: CDP's
// Extensions domain (unpacked ones, enabled or not), CDP targets (anything
// with a running chrome-extension:// context) and, where the companion is
// present, chrome.management (every installed extension, with permissions).

import { z } from "zod";
import type { Browser } from "../../platform/puppeteer.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { type ExtensionBridge, extensionIdOf } from "./bridge.ts";
import {
  manifestAt,
  manifestPermissions,
  record,
  stringOr,
  strings,
} from "./manifest.ts";

/** The `extension_id` parameter of every tool that names one extension. */
export const extensionId = z.string().regex(/^[a-p]{32}$/, {
  message: "an extension id is 32 letters a-p, as in chrome-extension://<id>/",
}).describe("Extension id (32 letters a-p)");

export interface ExtensionEntry {
  id: string;
  name: string | null;
  version: string | null;
  enabled: boolean;
  description: string | null;
  type: string | null;
  install_type: string | null;
  permissions: string[];
  host_permissions: string[];
  path: string | null;
  /** Running contexts: service worker, pages, background page. */
  targets: { type: string; url: string }[];
  service_worker_running: boolean;
  /** Where the facts came from: extensions_domain, targets, management, manifest. */
  sources: string[];
  companion: boolean;
}

/** entryJson's shape, as the tools answer it. */
export const ExtensionOut = z.object({
  id: z.string(),
  name: z.string().nullable(),
  version: z.string().nullable(),
  enabled: z.boolean(),
  description: z.string().nullable(),
  type: z.string().nullable(),
  install_type: z.string().nullable(),
  permissions: z.array(z.string()),
  host_permissions: z.array(z.string()),
  path: z.string().nullable(),
  targets: z.array(z.object({ type: z.string(), url: z.string() })),
  service_worker_running: z.boolean(),
  sources: z.array(z.string()),
  companion: z.boolean(),
});

export function entryJson(entry: ExtensionEntry): { [key: string]: JsonValue } {
  return { ...entry, targets: entry.targets.map((target) => ({ ...target })) };
}

/** chrome.management.getAll() in the companion's service worker, as plain data. */
const MANAGEMENT_ALL =
  `async () => (await chrome.management.getAll()).map((e) => ({
  id: e.id, name: e.name, version: e.version, enabled: e.enabled,
  description: e.description, type: e.type, installType: e.installType,
  permissions: e.permissions, hostPermissions: e.hostPermissions,
}))`;

function blank(id: string): ExtensionEntry {
  return {
    id,
    name: null,
    version: null,
    enabled: true,
    description: null,
    type: null,
    install_type: null,
    permissions: [],
    host_permissions: [],
    path: null,
    targets: [],
    service_worker_running: false,
    sources: [],
    companion: false,
  };
}

/** Every extension the three views know, sorted by name then id. */
export async function listExtensions(
  bridge: ExtensionBridge,
  browser: Browser,
): Promise<{ entries: ExtensionEntry[]; companion: string | null }> {
  const entries = new Map<string, ExtensionEntry>();
  const entry = (id: string) => {
    let found = entries.get(id);
    if (!found) {
      found = blank(id);
      entries.set(id, found);
    }
    return found;
  };
  for (const info of await bridge.unpackedExtensions(browser)) {
    const e = entry(info.id);
    e.name = info.name;
    e.version = info.version;
    e.enabled = info.enabled;
    e.path = info.path;
    e.sources.push("extensions_domain");
  }
  for (const target of browser.targets()) {
    const id = extensionIdOf(target.url());
    if (id === undefined) continue;
    const e = entry(id);
    e.targets.push({ type: target.type(), url: target.url() });
    if (target.type() === "service_worker") e.service_worker_running = true;
    if (!e.sources.includes("targets")) e.sources.push("targets");
  }
  const companion = await bridge.companion(browser);
  if (companion !== undefined) {
    const all = await bridge.evaluate(browser, companion, MANAGEMENT_ALL, null);
    for (const item of Array.isArray(all) ? all : []) {
      const info = record(item);
      if (typeof info.id !== "string") continue;
      const e = entry(info.id);
      e.name = stringOr(info.name) ?? e.name;
      e.version = stringOr(info.version) ?? e.version;
      e.enabled = info.enabled === true;
      e.description = stringOr(info.description);
      e.type = stringOr(info.type);
      e.install_type = stringOr(info.installType);
      e.permissions = strings(info.permissions);
      e.host_permissions = strings(info.hostPermissions);
      e.sources.push("management");
    }
    entry(companion).companion = true;
  }
  // Without chrome.management: permissions from the manifest, on disk or in a running worker.
  for (const e of entries.values()) {
    if (e.sources.includes("management")) continue;
    const manifest = e.path !== null ? await manifestAt(e.path) : undefined;
    const live = manifest ?? (e.service_worker_running
      ? record(
        await bridge.evaluate(
          browser,
          e.id,
          "() => chrome.runtime.getManifest()",
          null,
        ).catch(() => null),
      )
      : undefined);
    if (live === undefined || Object.keys(live).length === 0) continue;
    e.name ??= stringOr(live.name);
    e.version ??= stringOr(live.version);
    e.description = stringOr(live.description);
    Object.assign(e, manifestPermissions(live));
    e.sources.push("manifest");
  }
  const sorted = [...entries.values()].sort((a, b) =>
    (a.name ?? "").localeCompare(b.name ?? "") || a.id.localeCompare(b.id)
  );
  return { entries: sorted, companion: companion ?? null };
}
