// The gateway: upstreams by name, the aggregate tool catalog, routing with
// replica groups, health checks with alerts, and registrations kept in the
// store. The MCP tools in tools.ts are thin over this class, which
// coordinates routing.ts, catalog.ts, registrations.ts, alerts.ts, views.ts.

import type {
  CallToolResult,
  ClientCapabilities,
  Tool,
} from "../../platform/mcp_sdk.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import type { Metric } from "../../platform/metrics.ts";
import type { JsonValue, Store } from "../../platform/store.ts";
import { VersionReader } from "../../platform/store_version.ts";
import { VERSION } from "../../platform/version.ts";
import {
  type CallContext,
  type DynamicTools,
  type Peer,
  type SessionPreferences,
  ToolError,
} from "../kit/mod.ts";
import type { AdminView, UpstreamState } from "./admin_view.ts";
import { alert, type AlertEvent } from "./alerts.ts";
import { buildCatalog, type Catalog, listingOf } from "./catalog.ts";
import { type GatewayConfig, upstreamTarget } from "./config.ts";
import {
  credentialHeaders,
  hideFromLogs,
  sealCredentials,
  storedCredentials,
} from "./credentials.ts";
import { discoverServers } from "./discovery.ts";
import {
  applyDiscovered,
  autoCandidates,
  AutoDiscovery,
  autoNetworks,
} from "./auto_discovery.ts";
import {
  addRegistration,
  groupMember,
  httpTarget,
  registeredUpstream,
  type Registration,
  REGISTRATIONS_VERSION,
  removeRegistration,
  storedRegistrations,
} from "./registrations.ts";
import { broadcast, namesOf, ReplicaGroups } from "./routing.ts";
import {
  META_LISTINGS,
  META_NAMES,
  modeFor,
  OnDemandTools,
} from "./on_demand.ts";
import {
  Upstream,
  type UpstreamSource,
  type UpstreamTarget,
} from "./upstream.ts";
import { adminViewOf, healthOf, metricsOf } from "./views.ts";

export interface GatewayOptions {
  config: GatewayConfig;
  store: Store;
  log: Logger;
  peers: readonly Peer[];
  env: Readonly<Record<string, string>>;
  /** Tells connected clients that the aggregate tool list changed. */
  toolsChanged(): void;
  /** Where daemons announce themselves, who we are, and our own /mcp (never discovered as "other"). */
  discovery?: {
    store: Store;
    instance: string;
    selfUrl(): string | undefined;
  };
  /** The daemon's secret key, opened on first use: it seals registrations' credentials. */
  secretKey(): Promise<CryptoKey>;
  /**
   * The gateway's own eight tools, listed and called beside the aggregate in
   * on-demand mode (handed in by mod.ts: tools.ts defines them on this class).
   */
  ownTools: {
    list(): Tool[];
    call(
      gateway: Gateway,
      name: string,
      args: Record<string, unknown>,
      call: CallContext,
    ): Promise<CallToolResult> | undefined;
  };
  clock?: () => number;
  fetchFn?: typeof fetch;
}

export class Gateway implements DynamicTools {
  readonly config: GatewayConfig;
  readonly #options: GatewayOptions;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly upstreams = new Map<string, Upstream>();
  readonly #groups: ReplicaGroups;
  #catalog: Catalog = new Map();
  #catalogKey = "";
  #timer: ReturnType<typeof setInterval> | undefined;
  #checking: Promise<void> | undefined;
  #stopping = false;
  #autoDiscovery: AutoDiscovery | undefined;
  /** The registrations version this view reflects (undefined: re-read). */
  #seenVersion: string | null | undefined;
  readonly #registrationsVersion: VersionReader;
  #refreshing: Promise<void> | undefined;
  /** Names being registered now: the health round must not add them from the store too. */
  readonly #registering = new Set<string>();
  /** Stored registrations skipped for a group's name, said once each. */
  readonly #skippedRegistrations = new Set<string>();
  readonly version = VERSION;
  /** Gateway names claimed by two groups: the later group's tool is not listed. */
  readonly collisions = new Map<string, { kept: string; dropped: string }>();
  #ownListings: Tool[] | undefined;
  readonly #onDemand = new OnDemandTools({
    all: () => [
      ...(this.#ownListings ??= this.#options.ownTools.list()),
      ...this.list(),
    ],
    key: () => this.#catalogKey,
    call: (name, args, call) =>
      this.#options.ownTools.call(this, name, args, call) ??
        this.call(name, args, call),
  });

  constructor(options: GatewayOptions) {
    this.#options = options;
    this.config = options.config;
    this.#log = options.log;
    this.#clock = options.clock ?? Date.now;
    this.#registrationsVersion = new VersionReader(options.store, [
      ...REGISTRATIONS_VERSION,
    ]);
    this.#groups = new ReplicaGroups(this.upstreams, {
      config: this.config,
      log: this.#log,
    });
  }

  /** Start: built-in peers, configured upstreams, stored registrations; every one health-checked. */
  async start(): Promise<void> {
    for (const peer of this.#options.peers) {
      this.#add(
        this.#newUpstream(peer.id, peer.id, "builtin", {
          kind: "builtin",
          peer,
        }),
      );
    }
    for (const [name, entry] of Object.entries(this.config.upstreams)) {
      if (this.upstreams.has(name)) {
        throw new Error(
          `gateway.upstreams.${name}: the name is taken by a built-in server`,
        );
      }
      const target = upstreamTarget(name, entry, {
        env: this.#options.env,
        log: this.#log,
      });
      this.#add(
        this.#newUpstream(
          name,
          entry.group ?? name,
          "config",
          target,
          entry.tools,
        ),
      );
    }
    for (const registration of await storedRegistrations(this.#options.store)) {
      if (this.upstreams.has(registration.name)) continue;
      if (this.#namedLikeGroup(registration.name)) continue;
      this.#add(await this.#stored(registration));
    }
    await Promise.all(
      [...this.upstreams.values()].map((upstream) =>
        upstream.connect().catch(() => {})
      ),
    );
    this.#rebuild();
    this.#timer = setInterval(() => {
      this.checkAll().catch((error) =>
        this.#log.error("health_check_failed", { error: messageOf(error) })
      );
    }, this.config.health_interval_ms);
    if (autoNetworks(this.config.discovery).length > 0) {
      this.#autoDiscovery = new AutoDiscovery({
        intervalMs: this.config.discovery.interval_ms,
        listening: () => this.#options.discovery?.selfUrl() !== undefined,
        round: () => this.autoDiscover(),
        log: this.#log,
      });
      this.#autoDiscovery.start();
    }
  }

  /** One round of health checks, plus registrations other daemons made or removed. */
  checkAll(): Promise<void> {
    this.#checking ??= (async () => {
      await this.#reconcile();
      await Promise.all(
        [...this.upstreams.values()].map((upstream) => upstream.check()),
      );
    })().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  #add(upstream: Upstream): Upstream {
    this.upstreams.set(upstream.name, upstream);
    return upstream;
  }

  /** A registered server (its own replica group, over HTTP), neither connected nor added. */
  #registered(
    registration: {
      name: string;
      url: string;
      tools: readonly string[] | null | undefined;
    },
    headers: Readonly<Record<string, string>> = {},
  ): Upstream {
    hideFromLogs(this.#log, headers);
    return this.#newUpstream(
      registration.name,
      registration.name,
      "registered",
      httpTarget(registration.url, headers),
      registration.tools ?? undefined,
    );
  }

  /** A stored registration with its credentials opened; without them when they cannot be (it then fails its checks). */
  async #stored(registration: Registration): Promise<Upstream> {
    const headers = await storedCredentials(registration, {
      secretKey: this.#options.secretKey,
      log: this.#log,
    });
    return this.#registered(registration, headers);
  }

  #newUpstream(
    name: string,
    group: string,
    source: UpstreamSource,
    target: UpstreamTarget,
    tools?: readonly string[],
  ): Upstream {
    return new Upstream({
      name,
      group,
      source,
      target,
      tools,
      log: this.#log,
      connectTimeoutMs: this.config.connect_timeout_ms,
      healthTimeoutMs: this.config.health_timeout_ms,
      callTimeoutMs: this.config.call_timeout_ms,
      clock: this.#clock,
      onChange: (upstream, previous) => this.#changed(upstream, previous),
    });
  }

  #changed(upstream: Upstream, previous: UpstreamState): void {
    if (this.upstreams.get(upstream.name) !== upstream) return;
    const now = upstream.state;
    if (now === "unhealthy" && previous !== "unhealthy" && !this.#stopping) {
      this.#alert("upstream_down", upstream);
    } else if (now === "healthy" && previous === "unhealthy") {
      this.#alert("upstream_recovered", upstream);
    }
    this.#rebuild();
  }

  #alert(event: AlertEvent, upstream: Upstream): void {
    alert(event, upstream, {
      replicas: this.#groups.members(upstream.group),
      webhook: this.config.alert_webhook,
      log: this.#log,
      fetchFn: this.#options.fetchFn,
    });
  }

  // ------------------------------------------------------------ catalog

  /** A new catalog; clients are told only when its tool names changed. */
  #rebuild(): void {
    const catalog = buildCatalog(this.upstreams.values(), {
      overrides: this.config.tool_overrides,
      collided: (name, kept, dropped) => {
        if (this.collisions.get(name)?.dropped === dropped) return;
        this.collisions.set(name, { kept, dropped });
        this.#log.warn("tool_name_collision", { tool: name, kept, dropped });
      },
    });
    const key = [...catalog.keys()].join("\n");
    this.#catalog = catalog;
    if (key !== this.#catalogKey) {
      this.#catalogKey = key;
      this.#options.toolsChanged();
    }
  }

  list(): Tool[] {
    return [...this.#catalog.values()].map((entry) => entry.listing);
  }

  /** On-demand clients see only the meta-tools; others get undefined (the whole list). */
  listFor(
    client: ClientCapabilities | undefined,
    preferences: SessionPreferences = {},
  ): Tool[] | undefined {
    return modeFor(client, this.config.tools_mode, preferences.tools) ===
        "on_demand"
      ? [...META_LISTINGS]
      : undefined;
  }

  has(name: string): boolean {
    return this.#catalog.has(name) || META_NAMES.has(name);
  }

  call(
    name: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    if (META_NAMES.has(name)) return this.#onDemand.call(name, args, call);
    const entry = this.#catalog.get(name);
    if (!entry) throw new ToolError(`Unknown tool "${name}"`);
    return this.#groups.call(
      entry.group,
      entry.tool,
      { ...entry.defaults, ...args },
      call,
    );
  }

  // ------------------------------------------------------------ routing

  /** `route_tool_call`: `server` is an upstream name or a replica group. */
  route(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    return this.#groups.route(server, tool, args, call);
  }

  /** `broadcast_tool_call`: every healthy upstream with the tool, in parallel; one result each. */
  broadcast(
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    return broadcast(this.upstreams, {
      tool,
      args,
      call,
      timeoutMs: this.config.broadcast_timeout_ms,
    });
  }

  // ------------------------------------------------------- registrations

  /**
   * Before each list or call: when the stored registrations changed (another
   * daemon on a shared store registered or removed one), reconcile first, so
   * the change is seen on the very next request. One get of the registrations'
   * version key per request, shared by requests in flight together. None for a
   * call of a tool (`tool`) of a built-in or configured group: a registration
   * is its own group, never named like another one (register_server refuses
   * the name, #reconcile skips it), so it can neither add nor change that tool.
   */
  async refresh(tool?: string): Promise<void> {
    if (tool !== undefined) {
      const entry = this.#catalog.get(tool);
      if (entry && this.#fixedGroup(entry.group)) return;
    }
    let version: string | null;
    try {
      version = await this.#registrationsVersion.read();
    } catch {
      return; // the store is away: serve what is known
    }
    if (version === this.#seenVersion) return;
    // After any reconcile in flight: it may have read the store before this change.
    const run = (this.#refreshing ?? Promise.resolve()).then(() =>
      this.#reconcile()
    );
    this.#refreshing = run;
    await run;
    if (this.#refreshing === run) this.#refreshing = undefined;
    this.#seenVersion = version;
  }

  /** Every member of `group` is built in or configured: no registration joins it. */
  #fixedGroup(group: string): boolean {
    let members = 0;
    for (const upstream of this.upstreams.values()) {
      if (upstream.group !== group) continue;
      if (upstream.source !== "builtin" && upstream.source !== "config") {
        return false;
      }
      members++;
    }
    return members > 0;
  }

  /** Registrations made or removed by other daemons sharing the store. */
  async #reconcile(): Promise<void> {
    let stored: Registration[];
    try {
      stored = await storedRegistrations(this.#options.store);
    } catch (error) {
      this.#log.warn("registrations_unreadable", { error: messageOf(error) });
      return;
    }
    const names = new Set(stored.map((registration) => registration.name));
    for (const upstream of [...this.upstreams.values()]) {
      if (upstream.source === "registered" && !names.has(upstream.name)) {
        this.upstreams.delete(upstream.name);
        await upstream.close();
        this.#log.info("unregistered", {
          upstream: upstream.name,
          by: "another daemon",
        });
      }
    }
    for (const registration of stored) {
      if (
        this.upstreams.has(registration.name) ||
        this.#namedLikeGroup(registration.name) ||
        this.#registering.has(registration.name)
      ) continue;
      const upstream = this.#add(await this.#stored(registration));
      await upstream.connect().catch(() => {});
    }
    this.#rebuild();
  }

  /**
   * A stored registration named like a group of this daemon's config would
   * join that group as a replica: it is skipped (and said once per name).
   */
  #namedLikeGroup(name: string): boolean {
    if (groupMember(this.upstreams, name) === undefined) return false;
    if (!this.#skippedRegistrations.has(name)) {
      this.#skippedRegistrations.add(name);
      this.#log.warn("registration_skipped", {
        upstream: name,
        reason: "a group of this daemon's config has that name",
      });
    }
    return true;
  }

  /** `register_server`: addRegistration checks, connects and saves (credentials sealed); then the tools are listed. */
  async register(
    name: string,
    url: string,
    tools: readonly string[] | undefined,
    credentials: {
      token?: string;
      headers?: Readonly<Record<string, string>>;
    } = {},
  ): Promise<Upstream> {
    const headers = credentialHeaders(credentials.token, credentials.headers);
    hideFromLogs(this.#log, headers);
    if (this.#registering.has(name)) {
      throw new ToolError(
        `"${name}" is being registered by another call right now.`,
      );
    }
    this.#registering.add(name);
    let added;
    try {
      added = await addRegistration(
        { name, url, tools, headers },
        {
          store: this.#options.store,
          upstreams: this.upstreams,
          clock: this.#clock,
          newUpstream: (as, href, only, sent) =>
            this.#registered({ name: as, url: href, tools: only }, sent),
          seal: async (as, sent) =>
            await sealCredentials(await this.#options.secretKey(), as, sent),
        },
      );
    } finally {
      this.#registering.delete(name);
    }
    const { upstream, registration } = added;
    if (this.#stopping) {
      await upstream.close();
      throw new ToolError("The gateway is shutting down.");
    }
    this.upstreams.set(name, upstream);
    this.#seenVersion = undefined; // this view changed apart from refresh()
    this.#log.info("registered", { upstream: name, url: registration.url });
    this.#rebuild();
    return upstream;
  }

  async unregister(name: string): Promise<void> {
    const upstream = registeredUpstream(this.upstreams, name);
    await removeRegistration(this.#options.store, name);
    this.upstreams.delete(name);
    this.#seenVersion = undefined; // this view changed apart from refresh()
    await upstream.close();
    this.#log.info("unregistered", { upstream: name });
    this.#rebuild();
  }

  // ---------------------------------------------------------- discovery

  /** `discover_servers`: probes what the config names and what daemons announced; registers nothing. */
  async discover(network?: string): Promise<{ [key: string]: JsonValue }> {
    const discovery = this.#options.discovery;
    if (!discovery) throw new ToolError("Discovery is not set up here.");
    return await discoverServers({
      config: this.config.discovery,
      store: discovery.store,
      instance: discovery.instance,
      selfUrl: () => discovery.selfUrl(),
      upstreams: this.upstreams,
      network,
      fetchFn: this.#options.fetchFn,
    });
  }

  /**
   * One auto-discovery round (auto_discovery.ts): what is found and not yet
   * served is added as a `discovered` upstream; discovered ones no longer
   * found leave. Never stored: each daemon discovers for itself.
   */
  async autoDiscover(): Promise<void> {
    const discovery = this.#options.discovery;
    if (!discovery || this.#stopping) return;
    const candidates = await autoCandidates({
      networks: autoNetworks(this.config.discovery),
      config: this.config.discovery,
      store: discovery.store,
      instance: discovery.instance,
      fetchFn: this.#options.fetchFn,
    });
    if (this.#stopping) return;
    const changed = await applyDiscovered(candidates, {
      self: discovery.selfUrl(),
      upstreams: this.upstreams,
      taken: (name) => this.upstreams.has(name) || this.#registering.has(name),
      create: (name, url) =>
        this.#newUpstream(name, name, "discovered", httpTarget(url)),
      log: this.#log,
    });
    if (changed) this.#rebuild();
  }

  get(name: string): Upstream {
    const upstream = this.upstreams.get(name);
    if (!upstream) {
      throw new ToolError(
        `No server named "${name}". Known: ${
          namesOf(this.upstreams).join(", ")
        }`,
      );
    }
    return upstream;
  }

  /** Gateway names of one upstream's tools. */
  toolsOf(upstream: Upstream): Tool[] {
    return listingOf(upstream);
  }

  // ------------------------------------------------------------- views

  adminView(): AdminView {
    return adminViewOf(this.upstreams.values(), {
      catalog: this.#catalog,
      config: this.config,
      now: this.#clock(),
    });
  }

  health(): { [key: string]: JsonValue } {
    return healthOf(this.upstreams.values(), this.#catalog);
  }

  metrics(): Metric[] {
    return metricsOf(this.upstreams.values());
  }

  /** Shutdown: no more checks; calls already running were drained by the host; close every upstream. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#timer);
    const discovering = this.#autoDiscovery?.stop();
    await this.#checking?.catch(() => {});
    await discovering;
    await Promise.all(
      [...this.upstreams.values()].map((upstream) => upstream.close()),
    );
  }
}
