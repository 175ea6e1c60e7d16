// The built-in servers. A server appears here only once it is built: the
// daemon never lists a stub. Each server's module (and its heavy
// dependencies: puppeteer, FFI, OAuth) is imported only when a command needs
// that server, so `agentd mcp memory` loads the memory server alone.

import { lazy } from "../platform/lazy.ts";
import type { AnyServerSpec } from "./kit/mod.ts";

/** Every server id the architecture names, built or not, in display order. */
export const SERVER_IDS = [
  "browser-automation",
  "extension-bridge",
  "in-page",
  "desktop-control",
  "gateway",
  "memory",
  "platform-auth",
] as const;

/** The servers a binary runs: their ids up front, their modules on demand. */
export interface ServerCatalog {
  /** Built server ids, in start order. */
  readonly ids: readonly string[];
  /** The specs of `ids` (all when absent), in start order; unknown ids are skipped. */
  load(ids?: readonly string[]): Promise<AnyServerSpec[]>;
}

// The gateway first (it aggregates the others), then SERVER_IDS order.
const builtinLoaders: ReadonlyMap<string, () => Promise<AnyServerSpec>> =
  new Map<string, () => Promise<AnyServerSpec>>([
    [
      "gateway",
      async () =>
        (await lazy<typeof import("./gateway/mod.ts")>(
          "./gateway/mod.ts",
          import.meta.url,
        )).gatewayServer,
    ],
    [
      "browser-automation",
      async () =>
        (await lazy<typeof import("./browser-automation/mod.ts")>(
          "./browser-automation/mod.ts",
          import.meta.url,
        )).browserAutomationServer,
    ],
    [
      "extension-bridge",
      async () =>
        (await lazy<typeof import("./extension-bridge/mod.ts")>(
          "./extension-bridge/mod.ts",
          import.meta.url,
        )).extensionBridgeServer,
    ],
    [
      "in-page",
      async () =>
        (await lazy<typeof import("./in-page/mod.ts")>(
          "./in-page/mod.ts",
          import.meta.url,
        )).inPageServer,
    ],
    [
      "desktop-control",
      async () =>
        (await lazy<typeof import("./desktop-control/mod.ts")>(
          "./desktop-control/mod.ts",
          import.meta.url,
        )).desktopControlServer,
    ],
    [
      "memory",
      async () =>
        (await lazy<typeof import("./memory/mod.ts")>(
          "./memory/mod.ts",
          import.meta.url,
        )).memoryServer,
    ],
    [
      "platform-auth",
      async () =>
        (await lazy<typeof import("./platform-auth/mod.ts")>(
          "./platform-auth/mod.ts",
          import.meta.url,
        )).platformAuthServer,
    ],
  ]);

export const builtinCatalog: ServerCatalog = {
  ids: [...builtinLoaders.keys()],
  load(ids) {
    const wanted = [...builtinLoaders].filter(([id]) =>
      ids === undefined || ids.includes(id)
    );
    return Promise.all(wanted.map(([, load]) => load()));
  },
};

/** Every built-in server, loaded (tests and tools that need them all). */
export function loadBuiltinServers(): Promise<AnyServerSpec[]> {
  return builtinCatalog.load();
}

/** A catalog over specs already loaded (a test's own servers). */
export function catalogOf(specs: readonly AnyServerSpec[]): ServerCatalog {
  return {
    ids: specs.map((spec) => spec.id),
    load: (ids) =>
      Promise.resolve(
        specs.filter((spec) => ids === undefined || ids.includes(spec.id)),
      ),
  };
}
