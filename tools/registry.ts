// The built-in servers. A server appears here only once it is built: the
// daemon never lists a stub. Each server's module (and its heavy
// dependencies: puppeteer, FFI, OAuth) is imported only when a command needs
// that server, so `agentd mcp memory` loads the memory server alone; its
// config section (config.ts) loads apart, so `serve` validates every section
// and loads only the servers it runs. lazy_modules.ts gathers these modules
// with the rest loaded on first use, for deno compile.

import { type LazyModule, lazyModule } from "../platform/lazy.ts";
import type { z } from "zod";
import type { AnyServerSpec, ServerFacts } from "./kit/mod.ts";
import type { HostDeferral } from "./kit/host.ts";
import type { Tool } from "../platform/mcp_sdk_types.ts";
import { BUILTIN_ICONS } from "./icons.ts";

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
  /**
   * Which of `ids` `serve` loads on first use, and what each is until then
   * (its generated listings and facts, and its preflight: what the daemon
   * must know at start without loading it). Servers that aggregate others
   * (the gateway) are not among them. Absent: the catalog loads its servers
   * up front (tests' own specs).
   */
  deferrals?(ids: readonly string[]): Promise<HostDeferral[]>;
}

/** A server's generated tools/<id>/tool_listings.ts. */
interface ListingsModule {
  TOOL_LISTINGS: readonly Tool[];
  SERVER_FACTS: ServerFacts;
}

/** A server's tools/<id>/preflight.ts: its check at `serve`'s start, without its modules. */
interface PreflightModule {
  preflight: NonNullable<HostDeferral["preflight"]>;
}

interface BuiltinServer {
  id: string;
  /** Its mod.ts, config.ts and tool_listings.ts, which lazy_modules.ts passes to deno compile. */
  modules: readonly LazyModule<unknown>[];
  spec(): Promise<AnyServerSpec>;
  config(): Promise<z.ZodObject>;
  deferral(): Promise<HostDeferral>;
}

function builtin<S, C>(
  id: string,
  server: LazyModule<S>,
  spec: (module: S) => AnyServerSpec,
  section: LazyModule<C>,
  config: (module: C) => z.ZodObject,
  listings: LazyModule<ListingsModule>,
  preflight?: LazyModule<PreflightModule>,
): BuiltinServer {
  const load = async () => withIcons(spec(await server.load()));
  return {
    id,
    modules: [server, section, listings, ...preflight ? [preflight] : []],
    spec: load,
    config: async () => config(await section.load()),
    async deferral() {
      const { TOOL_LISTINGS, SERVER_FACTS } = await listings.load();
      return {
        facts: SERVER_FACTS,
        listings: TOOL_LISTINGS,
        icons: BUILTIN_ICONS[id],
        load,
        ...preflight
          ? {
            preflight: async (options) =>
              (await preflight.load()).preflight(options),
          }
          : {},
      };
    },
  };
}

/** Specs with their icons, one object per spec (the kit keeps state per spec object). */
const iconed = new WeakMap<AnyServerSpec, AnyServerSpec>();

function withIcons(spec: AnyServerSpec): AnyServerSpec {
  const icons = BUILTIN_ICONS[spec.id];
  if (icons === undefined || spec.icons !== undefined) return spec;
  let out = iconed.get(spec);
  if (!out) {
    out = { ...spec, icons };
    iconed.set(spec, out);
  }
  return out;
}

const gatewayModule = lazyModule<typeof import("./gateway/mod.ts")>(
  "./gateway/mod.ts",
  import.meta.url,
);

/** The gateway's module, for wiring a running gateway (loaded by then: the gateway started from it). */
export function loadGatewayModule(): Promise<
  typeof import("./gateway/mod.ts")
> {
  return gatewayModule.load();
}

// The gateway first (it aggregates the others), then SERVER_IDS order.
const builtins: readonly BuiltinServer[] = [
  builtin(
    "gateway",
    gatewayModule,
    (module) => module.gatewayServer,
    lazyModule<typeof import("./gateway/config.ts")>(
      "./gateway/config.ts",
      import.meta.url,
    ),
    (module) => module.GatewayConfig,
    lazyModule<ListingsModule>("./gateway/tool_listings.ts", import.meta.url),
  ),
  builtin(
    "browser-automation",
    lazyModule<typeof import("./browser-automation/mod.ts")>(
      "./browser-automation/mod.ts",
      import.meta.url,
    ),
    (module) => module.browserAutomationServer,
    lazyModule<typeof import("./browser-automation/config.ts")>(
      "./browser-automation/config.ts",
      import.meta.url,
    ),
    (module) => module.BrowserAutomationConfig,
    lazyModule<ListingsModule>(
      "./browser-automation/tool_listings.ts",
      import.meta.url,
    ),
  ),
  builtin(
    "extension-bridge",
    lazyModule<typeof import("./extension-bridge/mod.ts")>(
      "./extension-bridge/mod.ts",
      import.meta.url,
    ),
    (module) => module.extensionBridgeServer,
    lazyModule<typeof import("./extension-bridge/config.ts")>(
      "./extension-bridge/config.ts",
      import.meta.url,
    ),
    (module) => module.ExtensionBridgeConfig,
    lazyModule<ListingsModule>(
      "./extension-bridge/tool_listings.ts",
      import.meta.url,
    ),
  ),
  builtin(
    "in-page",
    lazyModule<typeof import("./in-page/mod.ts")>(
      "./in-page/mod.ts",
      import.meta.url,
    ),
    (module) => module.inPageServer,
    lazyModule<typeof import("./in-page/config.ts")>(
      "./in-page/config.ts",
      import.meta.url,
    ),
    (module) => module.InPageConfig,
    lazyModule<ListingsModule>("./in-page/tool_listings.ts", import.meta.url),
  ),
  builtin(
    "desktop-control",
    lazyModule<typeof import("./desktop-control/mod.ts")>(
      "./desktop-control/mod.ts",
      import.meta.url,
    ),
    (module) => module.desktopControlServer,
    lazyModule<typeof import("./desktop-control/config.ts")>(
      "./desktop-control/config.ts",
      import.meta.url,
    ),
    (module) => module.DesktopControlConfig,
    lazyModule<ListingsModule>(
      "./desktop-control/tool_listings.ts",
      import.meta.url,
    ),
    lazyModule<PreflightModule>(
      "./desktop-control/preflight.ts",
      import.meta.url,
    ),
  ),
  builtin(
    "memory",
    lazyModule<typeof import("./memory/mod.ts")>(
      "./memory/mod.ts",
      import.meta.url,
    ),
    (module) => module.memoryServer,
    lazyModule<typeof import("./memory/config.ts")>(
      "./memory/config.ts",
      import.meta.url,
    ),
    (module) => module.MemoryConfig,
    lazyModule<ListingsModule>("./memory/tool_listings.ts", import.meta.url),
  ),
  builtin(
    "platform-auth",
    lazyModule<typeof import("./platform-auth/mod.ts")>(
      "./platform-auth/mod.ts",
      import.meta.url,
    ),
    (module) => module.platformAuthServer,
    lazyModule<typeof import("./platform-auth/config.ts")>(
      "./platform-auth/config.ts",
      import.meta.url,
    ),
    (module) => module.PlatformAuthConfig,
    lazyModule<ListingsModule>(
      "./platform-auth/tool_listings.ts",
      import.meta.url,
    ),
    lazyModule<PreflightModule>(
      "./platform-auth/preflight.ts",
      import.meta.url,
    ),
  ),
];

/** Every built-in server's modules (lazy_modules.ts lists them for deno compile). */
export const BUILTIN_SERVER_MODULES: readonly LazyModule<unknown>[] = builtins
  .flatMap((server) => server.modules);

export const builtinCatalog: ServerCatalog = {
  ids: builtins.map((server) => server.id),
  load(ids) {
    const wanted = builtins.filter((server) =>
      ids === undefined || ids.includes(server.id)
    );
    return Promise.all(wanted.map((server) => server.spec()));
  },
  sections() {
    return Promise.all(
      builtins.map(async (server) => ({
        id: server.id,
        config: await server.config(),
      })),
    );
  },
  async deferrals(ids) {
    const all = await Promise.all(
      builtins.filter((server) => ids.includes(server.id)).map((server) =>
        server.deferral()
      ),
    );
    return all.filter((deferral) => !deferral.facts.aggregates);
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

/** `catalog` with `specs` after its own servers (a test's fixtures beside the built-in ones). */
export function withSpecs(
  catalog: ServerCatalog,
  specs: readonly AnyServerSpec[],
): ServerCatalog {
  const extra = catalogOf(specs);
  const own = (ids: readonly string[] | undefined) =>
    ids?.filter((id) => catalog.ids.includes(id));
  return {
    ids: [...catalog.ids, ...extra.ids],
    load: async (ids) => [
      ...await catalog.load(own(ids)),
      ...await extra.load(ids),
    ],
    sections: async () => [
      ...await catalog.sections(),
      ...await extra.sections(),
    ],
    ...catalog.deferrals
      ? {
        deferrals: catalog.deferrals.bind(catalog),
      }
      : {},
  };
}
