// The built-in servers. A server appears here only once it is built: the
// daemon never lists a stub. Each server's module (and its heavy
// dependencies: puppeteer, FFI, OAuth) is imported only when a command needs
// that server, so `agentd mcp memory` loads the memory server alone; its
// config section (config.ts) loads apart, so `serve` validates every section
// and loads only the servers it runs.

import { lazy } from "../platform/lazy.ts";
import type { z } from "zod";
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

/** A server's config section, known without loading the server. */
export interface ServerSection {
  id: string;
  config?: z.ZodObject;
}

/** The servers a binary runs: their ids up front, their modules on demand. */
export interface ServerCatalog {
  /** Built server ids, in start order. */
  readonly ids: readonly string[];
  /** The specs of `ids` (all when absent), in start order; unknown ids are skipped. */
  load(ids?: readonly string[]): Promise<AnyServerSpec[]>;
  /**
   * Every server's config section, in start order. Only each server's
   * config.ts loads, so a daemon validates the whole config file and then
   * loads just the servers it runs.
   */
  sections(): Promise<ServerSection[]>;
}

interface BuiltinServer {
  spec(): Promise<AnyServerSpec>;
  config(): Promise<z.ZodObject>;
}

// The gateway first (it aggregates the others), then SERVER_IDS order.
const builtins: ReadonlyMap<string, BuiltinServer> = new Map<
  string,
  BuiltinServer
>([
  ["gateway", {
    spec: async () =>
      (await lazy<typeof import("./gateway/mod.ts")>(
        "./gateway/mod.ts",
        import.meta.url,
      )).gatewayServer,
    config: async () =>
      (await lazy<typeof import("./gateway/config.ts")>(
        "./gateway/config.ts",
        import.meta.url,
      )).GatewayConfig,
  }],
  ["browser-automation", {
    spec: async () =>
      (await lazy<typeof import("./browser-automation/mod.ts")>(
        "./browser-automation/mod.ts",
        import.meta.url,
      )).browserAutomationServer,
    config: async () =>
      (await lazy<typeof import("./browser-automation/config.ts")>(
        "./browser-automation/config.ts",
        import.meta.url,
      )).BrowserAutomationConfig,
  }],
  ["extension-bridge", {
    spec: async () =>
      (await lazy<typeof import("./extension-bridge/mod.ts")>(
        "./extension-bridge/mod.ts",
        import.meta.url,
      )).extensionBridgeServer,
    config: async () =>
      (await lazy<typeof import("./extension-bridge/config.ts")>(
        "./extension-bridge/config.ts",
        import.meta.url,
      )).ExtensionBridgeConfig,
  }],
  ["in-page", {
    spec: async () =>
      (await lazy<typeof import("./in-page/mod.ts")>(
        "./in-page/mod.ts",
        import.meta.url,
      )).inPageServer,
    config: async () =>
      (await lazy<typeof import("./in-page/config.ts")>(
        "./in-page/config.ts",
        import.meta.url,
      )).InPageConfig,
  }],
  ["desktop-control", {
    spec: async () =>
      (await lazy<typeof import("./desktop-control/mod.ts")>(
        "./desktop-control/mod.ts",
        import.meta.url,
      )).desktopControlServer,
    config: async () =>
      (await lazy<typeof import("./desktop-control/config.ts")>(
        "./desktop-control/config.ts",
        import.meta.url,
      )).DesktopControlConfig,
  }],
  ["memory", {
    spec: async () =>
      (await lazy<typeof import("./memory/mod.ts")>(
        "./memory/mod.ts",
        import.meta.url,
      )).memoryServer,
    config: async () =>
      (await lazy<typeof import("./memory/config.ts")>(
        "./memory/config.ts",
        import.meta.url,
      )).MemoryConfig,
  }],
  ["platform-auth", {
    spec: async () =>
      (await lazy<typeof import("./platform-auth/mod.ts")>(
        "./platform-auth/mod.ts",
        import.meta.url,
      )).platformAuthServer,
    config: async () =>
      (await lazy<typeof import("./platform-auth/config.ts")>(
        "./platform-auth/config.ts",
        import.meta.url,
      )).PlatformAuthConfig,
  }],
]);

export const builtinCatalog: ServerCatalog = {
  ids: [...builtins.keys()],
  load(ids) {
    const wanted = [...builtins].filter(([id]) =>
      ids === undefined || ids.includes(id)
    );
    return Promise.all(wanted.map(([, server]) => server.spec()));
  },
  sections() {
    return Promise.all(
      [...builtins].map(async ([id, server]) => ({
        id,
        config: await server.config(),
      })),
    );
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
    sections: () =>
      Promise.resolve(
        specs.map((spec) => ({ id: spec.id, config: spec.config })),
      ),
  };
}
