// The gateway: upstreams by name, the aggregate tool catalog, routing with
// replica groups, health checks with alerts, and registrations kept in the
// store. The MCP tools in gateway_tools.ts are thin over this class, which
// coordinates routing.ts, catalog.ts, registered_upstreams.ts,
// discovered_upstreams.ts, alerts.ts, views.ts.

import type {
  CallToolResult,
  ClientCapabilities,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  Tool,
} from "../../platform/mcp_sdk.ts";
import type { Caller } from "../../platform/identity.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import type { Metric } from "../../platform/metrics.ts";
import type { JsonValue, Store } from "../../platform/store/mod.ts";
import { VERSION } from "../../platform/version.ts";
import {
  type CallContext,
  type CallJudge,
  type DynamicPrompts,
  type DynamicResources,
  type DynamicTools,
  type ListRequest,
  type OwnTools,
  type Peer,
  type SessionPreferences,
  ToolError,
} from "../kit/mod.ts";
import type { AdminView, UpstreamState } from "./admin_view.ts";
import { alert, type AlertEvent } from "./alerts.ts";
import { buildCatalog, type Catalog, upstreamListings } from "./catalog.ts";
import { type GatewayConfig, upstreamTarget } from "./config.ts";
import {
  DiscoveredUpstreams,
  type DiscoverySetup,
} from "./discovered_upstreams.ts";
import { RegisteredUpstreams } from "./registered_upstreams.ts";
import { storeWithDeadline } from "./deadlines.ts";
import { broadcast, namesOf, ReplicaGroups } from "./routing.ts";
import { META_NAMES, META_TOOLS, modeFor, OnDemandTools } from "./on_demand.ts";
import { listingOf, runDefinedCall } from "../kit/tool_call.ts";
import {
  byName,
  Upstream,
  type UpstreamSource,
  type UpstreamTarget,
} from "./upstream.ts";
import { gatewayName, nestedTwice } from "../kit/tool_names.ts";
import { adminViewOf, healthOf, metricsOf } from "./views.ts";
import {
  type AgentsPort,
  type AgentTool,
  agentTools,
  callAgentTool,
} from "./agent_tools.ts";

export interface GatewayOptions {
  config: GatewayConfig;
  store: Store;
  log: Logger;
  peers: readonly Peer[];
  env: Readonly<Record<string, string>>;
  /** Tells connected clients that the aggregate tool list changed. */
  toolsChanged(): void;
  /** Tells connected clients that the upstreams' resources changed. */
  resourcesChanged?(): void;
  /** Tells connected clients that the upstreams' prompts changed. */
  promptsChanged?(): void;
  /** Where daemons announce themselves, who we are, and our own /mcp (never discovered as "other"). */
  discovery?: DiscoverySetup;
  /** The daemon's secret key, opened on first use: it seals registrations' credentials. */
  secretKey(): Promise<CryptoKey>;
  /**
   * The gateway's own eight tools (gateway_tools.ts) as the kit lists and runs them
   * (ServerDeps.own): in on-demand mode they are searched, described and
   * called beside the aggregate, through the same catalog and pipeline.
   */
  own: OwnTools;
  clock?: () => number;
  fetchFn?: typeof fetch;
  /**
   * The process's policy guard: judges calls of external upstreams
   * (Upstream.call) and the meta-tools (the kit judges the gateway's own
   * tools, also when `call_tool` reaches them), so that every way in meets
   * the same rules.
   */
  guard?: CallJudge;
}

/** The gateway's server id: its own tools are judged as `gateway.<tool>`. */
export const GATEWAY_ID = "gateway";

export class Gateway implements DynamicTools, DynamicResources, DynamicPrompts {
  readonly config: GatewayConfig;
  readonly #options: GatewayOptions;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly upstreams = new Map<string, Upstream>();
  /** Upstreams by replica group: `route_tool_call` routes through them. */
  readonly groups: ReplicaGroups;
  #catalog: Catalog = new Map();
  /** The upstreams' tools and the agent runtime's, by name: what list() answers. */
  #listed: Tool[] = [];
  /**
   * The listings as clients see them, names and all, as JSON: a change of
   * any tool (an upstream's new description or schema too) tells clients.
   * Kept whole (~180 KB with every built-in server) and compared natively:
   * a hash of it in JavaScript ran hot enough at start (one rebuild per
   * upstream) that V8 compiled it with TurboFan, whose first use kept about
   * 3.5 MiB resident in an idle daemon (bench/README.md, Transports).
   */
  #catalogJson = "";
  /** Counts the changes of #catalogJson: the on-demand search's cache key. */
  #catalogVersion = 0;
  /** The upstreams' resources (URIs as they give them) and their prompts (`<group>__<prompt>`). */
  #lists: UpstreamLists = emptyLists();
  /** The agent runtime's tools (agents__send, teams__execute), while one is attached. */
  #agents: { port: AgentsPort; tools: Map<string, AgentTool> } | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #checking: Promise<void> | undefined;
  #stopping = false;
  readonly registered: RegisteredUpstreams;
  readonly discovered: DiscoveredUpstreams;
  readonly version = VERSION;
  /** Gateway names claimed by two groups: the later group's tool is not listed. */
  readonly collisions = new Map<string, { kept: string; dropped: string }>();
  #metaListings: Tool[] | undefined;
  readonly #onDemand = new OnDemandTools({
    all: () => [...this.#options.own.list(), ...this.list()],
    key: () => String(this.#catalogVersion),
    call: (name, args, call) =>
      this.#options.own.has(name)
        ? this.#options.own.call(name, args, call)
        : this.call(name, args, call),
  });

  constructor(options: GatewayOptions) {
    this.#options = options;
    const store = storeWithDeadline(options.store, {
      ms: options.config.store_timeout_ms,
      whose: "the daemon's",
    });
    this.config = options.config;
    this.#log = options.log;
    this.#clock = options.clock ?? Date.now;
    this.registered = new RegisteredUpstreams({
      store,
      upstreams: this.upstreams,
      log: this.#log,
      clock: this.#clock,
      dnsTimeoutMs: this.config.dns_timeout_ms,
      secretKey: options.secretKey,
      newUpstream: (...spec) => this.#newUpstream(...spec),
      rebuild: () => this.#rebuild(),
      stopping: () => this.#stopping,
    });
    this.discovered = new DiscoveredUpstreams({
      config: this.config.discovery,
      discovery: options.discovery,
      upstreams: this.upstreams,
      taken: (name) =>
        this.upstreams.has(name) || this.registered.registering(name),
      newUpstream: (...spec) => this.#newUpstream(...spec),
      rebuild: () => this.#rebuild(),
      stopping: () => this.#stopping,
      log: this.#log,
      fetchFn: options.fetchFn,
    });
    this.groups = new ReplicaGroups(this.upstreams, {
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
    await this.registered.open();
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
    this.discovered.start();
  }

  /** One round of health checks, plus registrations other daemons made or removed. */
  checkAll(): Promise<void> {
    this.#checking ??= (async () => {
      await this.registered.reconcile();
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
      callMaxMs: this.config.call_max_ms,
      clock: this.#clock,
      onChange: (upstream, previous) => this.#changed(upstream, previous),
      guard: this.#options.guard,
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
      replicas: this.groups.members(upstream.group),
      webhook: this.config.alert_webhook,
      log: this.#log,
      fetchFn: this.#options.fetchFn,
    });
  }

  // ------------------------------------------------------------ catalog

  /**
   * A new catalog; clients are told when what they would list changed. An
   * unchanged catalog keeps its listing objects (readers cache per object).
   */
  #rebuild(): void {
    this.#rebuildLists();
    const local = this.#agents?.tools ?? new Map<string, AgentTool>();
    const built = buildCatalog(this.upstreams.values(), {
      overrides: this.config.tool_overrides,
      collided: (name, kept, dropped) => this.#collided(name, kept, dropped),
    });
    // The daemon's own agents and teams keep their names: an upstream
    // registered as "agents" cannot stand in for them.
    const catalog = new Map(
      [...built].filter(([name, entry]) => {
        const own = local.get(name);
        if (own === undefined) return true;
        this.#collided(name, own.server, entry.group);
        return false;
      }),
    );
    const listed = [
      ...[...catalog.values()].map((entry) => entry.listing),
      ...[...local.values()].map((tool) => tool.listing),
    ].sort(byName);
    const json = JSON.stringify(listed);
    if (json === this.#catalogJson) return;
    this.#catalog = catalog;
    this.#listed = listed;
    this.#catalogJson = json;
    this.#catalogVersion++;
    this.#options.toolsChanged();
  }

  /** The resource and prompt lists; clients are told of each that changed. */
  #rebuildLists(): void {
    const lists = buildLists(this.upstreams.values(), this.#log);
    const previous = this.#lists;
    this.#lists = lists;
    if (lists.resourcesKey !== previous.resourcesKey) {
      this.#options.resourcesChanged?.();
    }
    if (lists.promptsKey !== previous.promptsKey) {
      this.#options.promptsChanged?.();
    }
  }

  /** The resources `viewer` may read (Upstream.readsFor): a listing names what it could not. */
  listResources(viewer: Caller = {}): Resource[] {
    return [...this.#lists.resources.values()]
      .filter((entry) => this.#readable(entry.upstream, viewer))
      .map((entry) => entry.listing);
  }

  hasResource(uri: string): boolean {
    return this.#lists.resources.has(uri);
  }

  /** Only a URI an upstream listed is read, on that upstream, as the caller. */
  async readResource(
    uri: string,
    request: ListRequest,
  ): Promise<ReadResourceResult> {
    const entry = this.#lists.resources.get(uri);
    if (entry === undefined) throw new ToolError(`Unknown resource ${uri}`);
    return await this.get(entry.upstream).read(uri, request);
  }

  /** The prompts `viewer` may get, as listResources. */
  listPrompts(viewer: Caller = {}): Prompt[] {
    return [...this.#lists.prompts.values()]
      .filter((entry) => this.#readable(entry.upstream, viewer))
      .map((entry) => entry.listing);
  }

  #readable(upstream: string, viewer: Caller): boolean {
    return this.upstreams.get(upstream)?.readsFor(viewer) === true;
  }

  hasPrompt(name: string): boolean {
    return this.#lists.prompts.has(name);
  }

  async getPrompt(
    name: string,
    args: Record<string, string>,
    request: ListRequest,
  ): Promise<GetPromptResult> {
    const entry = this.#lists.prompts.get(name);
    if (entry === undefined) throw new ToolError(`Unknown prompt ${name}`);
    return await this.get(entry.upstream).getPrompt(
      entry.prompt,
      args,
      request,
    );
  }

  #collided(name: string, kept: string, dropped: string): void {
    if (this.collisions.get(name)?.dropped === dropped) return;
    this.collisions.set(name, { kept, dropped });
    this.#log.warn("tool_name_collision", { tool: name, kept, dropped });
  }

  /**
   * The daemon's agent runtime (cli/ hands it in once it runs): its tools
   * join the catalog, and connected clients are told. Returns the detach.
   */
  attachAgents(port: AgentsPort): () => void {
    const attached = { port, tools: agentTools(port) };
    this.#agents = attached;
    this.#rebuild();
    return () => {
      if (this.#agents !== attached) return;
      this.#agents = undefined;
      this.#rebuild();
    };
  }

  list(): Tool[] {
    return [...this.#listed];
  }

  /** On-demand clients see only the meta-tools; others get undefined (the whole list). */
  listFor(
    client: ClientCapabilities | undefined,
    preferences: SessionPreferences = {},
  ): Tool[] | undefined {
    return modeFor(client, this.config.tools_mode, preferences.tools) ===
        "on_demand"
      ? [
        ...(this.#metaListings ??= META_TOOLS.map((def) =>
          listingOf(def, GATEWAY_ID)
        )),
      ]
      : undefined;
  }

  has(name: string): boolean {
    return this.#catalog.has(name) || META_NAMES.has(name) ||
      this.#agents?.tools.has(name) === true;
  }

  call(
    name: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    const meta = META_TOOLS.find((def) => def.name === name);
    if (meta) {
      // Run as any defined tool, judged as gateway.<tool>; what call_tool
      // reaches is judged where it runs (the kit for the gateway's own tools,
      // Upstream.call for an upstream's).
      return runDefinedCall(meta, args, {
        server: GATEWAY_ID,
        context: () => this.#onDemand,
        guard: this.#options.guard,
        call,
        connection: call.connection,
      });
    }
    const agents = this.#agents;
    const local = agents?.tools.get(name);
    if (agents && local) {
      // Judged and audited as `<server>.<tool>` (agents.send), output checked.
      return callAgentTool(local, agents.port, args, {
        guard: this.#options.guard,
        call,
      });
    }
    const entry = this.#catalog.get(name);
    if (!entry) throw new ToolError(`Unknown tool "${name}"`);
    return this.groups.call(
      entry.group,
      entry.tool,
      { ...entry.defaults, ...args },
      call,
    );
  }

  // ------------------------------------------------------------ routing

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
      config: this.config,
    });
  }

  // ------------------------------------------------------- registrations

  /**
   * Before each list or call: registrations other daemons made or removed
   * (registered_upstreams.ts). None for a call of a tool (`tool`) of a
   * built-in or configured group: a registration is its own group, never
   * named like another one (register_server refuses the name, reconcile
   * skips it), so it can neither add nor change that tool.
   */
  async refresh(tool?: string): Promise<void> {
    if (tool !== undefined) {
      if (this.#agents?.tools.has(tool)) return;
      const entry = this.#catalog.get(tool);
      if (entry && this.#fixedGroup(entry.group)) return;
    }
    await this.registered.refresh();
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
    return upstreamListings(upstream);
  }

  // ------------------------------------------------------------- views

  /** The /admin view as `viewer` may see it (views.ts serverView), current with the store. */
  async adminView(viewer: Caller): Promise<AdminView> {
    await this.refresh();
    return adminViewOf(this.upstreams.values(), {
      catalog: this.#catalog,
      local: [...this.#agents?.tools ?? []].map(([name, tool]) => ({
        name,
        group: tool.server,
        tool: tool.def.name,
        shortened: false,
        description: tool.listing.description ?? "",
      })),
      config: this.config,
      now: this.#clock(),
      viewer,
    });
  }

  health(): { [key: string]: JsonValue } {
    return healthOf(this.upstreams.values(), this.#listed.length);
  }

  metrics(): Metric[] {
    return metricsOf(this.upstreams.values());
  }

  /** Shutdown: no more checks; calls already running were drained by the host; close every upstream. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#timer);
    const discovering = this.discovered.stop();
    await this.#checking?.catch(() => {});
    await discovering;
    await Promise.all(
      [...this.upstreams.values()].map((upstream) => upstream.close()),
    );
  }
}

interface UpstreamLists {
  resources: Map<string, { upstream: string; listing: Resource }>;
  prompts: Map<string, { upstream: string; prompt: string; listing: Prompt }>;
  resourcesKey: string;
  promptsKey: string;
}

function emptyLists(): UpstreamLists {
  return {
    resources: new Map(),
    prompts: new Map(),
    resourcesKey: "[]",
    promptsKey: "[]",
  };
}

/**
 * The healthy upstreams' resources and prompts, in upstream name order: a
 * URI two upstreams list is the first one's; a prompt is
 * `<group>__<prompt>` (kit/tool_names.ts), the first replica's.
 */
function buildLists(
  upstreams: Iterable<Upstream>,
  log: Logger,
): UpstreamLists {
  const lists = emptyLists();
  const healthy = [...upstreams]
    .filter((upstream) => upstream.state === "healthy")
    .sort(byName);
  for (const upstream of healthy) {
    for (const resource of upstream.resources) {
      const taken = lists.resources.get(resource.uri);
      if (taken !== undefined) {
        log.debug("resource_uri_collision", {
          uri: resource.uri,
          kept: taken.upstream,
          dropped: upstream.name,
        });
        continue;
      }
      lists.resources.set(resource.uri, {
        upstream: upstream.name,
        listing: resource,
      });
    }
    for (const prompt of upstream.prompts) {
      if (nestedTwice(prompt.name)) continue;
      const { name } = gatewayName(upstream.group, prompt.name);
      if (lists.prompts.has(name)) continue;
      lists.prompts.set(name, {
        upstream: upstream.name,
        prompt: prompt.name,
        listing: { ...prompt, name },
      });
    }
  }
  lists.resourcesKey = JSON.stringify([...lists.resources.values()]);
  lists.promptsKey = JSON.stringify([...lists.prompts.values()]);
  return lists;
}
