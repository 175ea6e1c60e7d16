// The gateway: upstreams by name, the aggregate tool catalog, routing with
// replica groups, health checks with alerts, and registrations kept in the
// store. The MCP tools in tools.ts are thin over this class.

import {
  type CallToolResult,
  McpError,
  type Tool,
} from "../../platform/mcp_sdk.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import type { Metric } from "../../platform/metrics.ts";
import type { JsonValue, Store } from "../../platform/store.ts";
import { VERSION } from "../../platform/version.ts";
import {
  type CallContext,
  type DynamicTools,
  errorResult,
  type Peer,
  ToolError,
} from "../kit.ts";
import type { AdminTool, AdminView, UpstreamState } from "./admin_view.ts";
import { type GatewayConfig, UPSTREAM_NAME } from "./config.ts";
import { discover as discoverTargets } from "./discovery.ts";
import { gatewayName } from "./naming.ts";
import {
  byName,
  describeFailure,
  Upstream,
  type UpstreamSource,
  type UpstreamTarget,
  UpstreamUnreachable,
} from "./upstream.ts";

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
  clock?: () => number;
  fetchFn?: typeof fetch;
}

interface CatalogEntry {
  group: string;
  tool: string;
  shortened: boolean;
  listing: Tool;
}

interface Registration {
  name: string;
  url: string;
  tools: string[] | null;
  registered_at: string;
}

const REGISTRATIONS = ["registrations"] as const;
/** Only names of the gateway itself; `memory` etc. are taken once their peers are added. */
const RESERVED = new Set(["gateway"]);
const UPSTREAM_META = "io.agentd/upstream";
const WEBHOOK_TIMEOUT_MS = 5000;

export class Gateway implements DynamicTools {
  readonly config: GatewayConfig;
  readonly #options: GatewayOptions;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly upstreams = new Map<string, Upstream>();
  #catalog = new Map<string, CatalogEntry>();
  #catalogKey = "";
  readonly #turn = new Map<string, number>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #checking: Promise<void> | undefined;
  #stopping = false;
  #discoveryTimer: ReturnType<typeof setInterval> | undefined;
  readonly version = VERSION;

  constructor(options: GatewayOptions) {
    this.#options = options;
    this.config = options.config;
    this.#log = options.log;
    this.#clock = options.clock ?? Date.now;
  }

  /** Start: built-in peers, configured upstreams, stored registrations; every one health-checked. */
  async start(): Promise<void> {
    for (const peer of this.#options.peers) {
      this.#add(peer.id, peer.id, "builtin", { kind: "builtin", peer });
    }
    for (const [name, entry] of Object.entries(this.config.upstreams)) {
      if (this.upstreams.has(name)) {
        throw new Error(
          `gateway.upstreams.${name}: the name is taken by a built-in server`,
        );
      }
      const target: UpstreamTarget = entry.url !== undefined
        ? {
          kind: "http",
          url: entry.url,
          headers: this.#headersOf(name, entry.headers, entry.token_env),
          passThroughAuth: entry.pass_through_auth,
        }
        : {
          kind: "stdio",
          command: entry.command ?? "",
          args: entry.args,
          env: entry.env,
          cwd: entry.cwd,
        };
      this.#add(name, entry.group ?? name, "config", target, entry.tools);
    }
    for (const registration of await this.#storedRegistrations()) {
      if (this.upstreams.has(registration.name)) continue;
      this.#add(
        registration.name,
        registration.name,
        "registered",
        httpTarget(registration.url),
        registration.tools ?? undefined,
      );
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
    if (this.config.discovery.auto_register) {
      this.#discoveryTimer = setInterval(() => {
        this.#autoRegister().catch((error) =>
          this.#log.warn("auto_register_failed", { error: messageOf(error) })
        );
      }, this.config.discovery.interval_ms);
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

  #headersOf(
    name: string,
    headers: Readonly<Record<string, string>>,
    tokenEnv: string | undefined,
  ): Record<string, string> {
    const merged: Record<string, string> = { ...headers };
    if (tokenEnv !== undefined) {
      const token = this.#options.env[tokenEnv];
      if (!token) {
        throw new Error(
          `gateway.upstreams.${name}.token_env: ${tokenEnv} is not set`,
        );
      }
      this.#log.addSecret(token);
      merged.Authorization = `Bearer ${token}`;
    }
    for (const value of Object.values(merged)) this.#log.addSecret(value);
    return merged;
  }

  #add(
    name: string,
    group: string,
    source: UpstreamSource,
    target: UpstreamTarget,
    tools?: readonly string[],
  ): Upstream {
    const upstream = this.#newUpstream(name, group, source, target, tools);
    this.upstreams.set(name, upstream);
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

  /** Logs the alert and POSTs it to the configured webhook (the URL itself is never logged: it is often a secret). */
  #alert(event: "upstream_down" | "upstream_recovered", upstream: Upstream) {
    const body = {
      event,
      upstream: upstream.name,
      group: upstream.group,
      state: upstream.state,
      since: new Date(upstream.since).toISOString(),
      error: upstream.lastError ?? null,
      replicas_healthy:
        this.#members(upstream.group).filter((member) =>
          member.state === "healthy"
        ).length,
    };
    if (event === "upstream_down") this.#log.warn("alert", body);
    else this.#log.info("alert", body);
    const webhook = this.config.alert_webhook;
    if (webhook === undefined) return;
    const fetchFn = this.#options.fetchFn ?? fetch;
    fetchFn(webhook, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    }).then(async (response) => {
      await response.body?.cancel();
      if (!response.ok) {
        this.#log.warn("alert_webhook_failed", {
          status: response.status,
          webhook_host: new URL(webhook).host,
        });
      }
    }).catch((error) =>
      this.#log.warn("alert_webhook_failed", {
        error: describeFailure(error),
        webhook_host: new URL(webhook).host,
      })
    );
  }

  // ------------------------------------------------------------ catalog

  /** The aggregate: every tool of every healthy upstream, under its group's prefix, sorted. */
  #rebuild(): void {
    const catalog = new Map<string, CatalogEntry>();
    const healthy = [...this.upstreams.values()]
      .filter((upstream) => upstream.state === "healthy")
      .sort(byName);
    for (const upstream of healthy) {
      for (const tool of upstream.tools) {
        const { name, shortened } = gatewayName(upstream.group, tool.name);
        if (catalog.has(name)) continue; // a replica already listed it
        const listing: Tool = { ...tool, name };
        catalog.set(name, {
          group: upstream.group,
          tool: tool.name,
          shortened,
          listing,
        });
      }
    }
    const sorted = new Map(
      [...catalog.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    const key = [...sorted.keys()].join("\n");
    this.#catalog = sorted;
    if (key !== this.#catalogKey) {
      this.#catalogKey = key;
      this.#options.toolsChanged();
    }
  }

  list(): Tool[] {
    return [...this.#catalog.values()].map((entry) => entry.listing);
  }

  has(name: string): boolean {
    return this.#catalog.has(name);
  }

  call(
    name: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    const entry = this.#catalog.get(name);
    if (!entry) throw new ToolError(`Unknown tool "${name}"`);
    return this.#callGroup(entry.group, entry.tool, args, call);
  }

  // ------------------------------------------------------------ routing

  #members(group: string): Upstream[] {
    return [...this.upstreams.values()].filter((upstream) =>
      upstream.group === group
    );
  }

  /** `route_tool_call`: `server` is an upstream name or a replica group. */
  route(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    const named = this.upstreams.get(server);
    const group = named?.group ?? server;
    if (this.#members(group).length === 0) {
      throw new ToolError(
        `No upstream or group "${server}". Known: ${this.#names().join(", ")}`,
      );
    }
    return this.#callGroup(group, tool, args, call, named);
  }

  async #callGroup(
    group: string,
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
    preferred?: Upstream,
  ): Promise<CallToolResult> {
    const tried = new Set<Upstream>();
    for (;;) {
      const upstream = this.#pick(group, tool, preferred, tried);
      if (!upstream) throw new ToolError(this.#unavailable(group, tool));
      try {
        const result = await upstream.call(tool, args, call);
        result._meta = { ...result._meta, [UPSTREAM_META]: upstream.name };
        return result;
      } catch (error) {
        if (error instanceof UpstreamUnreachable) {
          tried.add(upstream);
          this.#log.warn("reroute", {
            group,
            tool,
            from: upstream.name,
            error: error.message,
          });
          continue;
        }
        const message = error instanceof McpError
          ? error.message
          : messageOf(error);
        return errorResult(
          `${tool} on upstream "${upstream.name}" failed: ${message}`,
        );
      }
    }
  }

  #pick(
    group: string,
    tool: string,
    preferred: Upstream | undefined,
    tried: ReadonlySet<Upstream>,
  ): Upstream | undefined {
    const ready = this.#members(group).filter((upstream) =>
      upstream.state === "healthy" && upstream.has(tool) &&
      !tried.has(upstream)
    ).sort(byName);
    if (ready.length === 0) return undefined;
    if (preferred && ready.includes(preferred)) return preferred;
    const turn = this.#turn.get(group) ?? 0;
    this.#turn.set(group, turn + 1);
    if (this.config.balance === "least_in_flight") {
      const least = Math.min(...ready.map((upstream) => upstream.inFlight));
      const idle = ready.filter((upstream) => upstream.inFlight === least);
      return idle[turn % idle.length];
    }
    return ready[turn % ready.length];
  }

  /** Why a call cannot go anywhere: which upstream is down, since when, and why. */
  #unavailable(group: string, tool: string): string {
    const members = this.#members(group);
    const having = members.filter((upstream) => upstream.has(tool));
    if (having.length === 0) {
      const known = [
        ...new Set(
          members.flatMap((upstream) => upstream.tools.map((t) => t.name)),
        ),
      ].sort();
      return `Unknown tool "${tool}" on "${group}". Its tools: ${
        known.length ? known.join(", ") : "none known yet"
      }`;
    }
    const down = having.map((upstream) =>
      `"${upstream.name}" is ${upstream.state} since ${
        new Date(upstream.since).toISOString()
      }${upstream.lastError ? ` (${upstream.lastError})` : ""}`
    );
    const replicas = having.length > 1
      ? `no healthy replica in group "${group}"`
      : "no replica is registered";
    return `Cannot call ${tool}: upstream ${down.join("; ")}; ${replicas}.`;
  }

  /** `broadcast_tool_call`: every healthy upstream with the tool, in parallel; one result each. */
  async broadcast(
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    const having = [...this.upstreams.values()]
      .filter((upstream) => upstream.has(tool))
      .sort(byName);
    if (having.length === 0) {
      return errorResult(
        `No upstream has a tool "${tool}". Tools come from: ${
          this.#names().join(", ")
        }`,
      );
    }
    const timeoutMs = this.config.broadcast_timeout_ms;
    const results = await Promise.all(having.map(async (upstream) => {
      const started = performance.now();
      const base = { server: upstream.name, group: upstream.group };
      if (upstream.state !== "healthy") {
        return {
          ...base,
          status: "down",
          error: `${upstream.state} since ${
            new Date(upstream.since).toISOString()
          }${upstream.lastError ? ` (${upstream.lastError})` : ""}`,
          duration_ms: 0,
        };
      }
      const signal = AbortSignal.any([
        call.signal,
        AbortSignal.timeout(timeoutMs),
      ]);
      try {
        const result = await upstream.call(tool, args, { ...call, signal });
        return {
          ...base,
          status: result.isError ? "error" : "ok",
          content: result.content as JsonValue,
          ...(result.structuredContent
            ? { structured_content: result.structuredContent as JsonValue }
            : {}),
          duration_ms: Math.round(performance.now() - started),
        };
      } catch (error) {
        const timedOut = signal.aborted && !call.signal.aborted;
        return {
          ...base,
          status: timedOut ? "timeout" : "error",
          error: timedOut
            ? `timed out after ${timeoutMs} ms`
            : messageOf(error),
          duration_ms: Math.round(performance.now() - started),
        };
      }
    }));
    const succeeded = results.filter((result) => result.status === "ok").length;
    const body = {
      tool,
      succeeded,
      failed: results.length - succeeded,
      results,
    };
    return {
      content: [{ type: "text", text: JSON.stringify(body, null, 2) }],
      structuredContent: body,
      isError: succeeded === 0,
    };
  }

  // ------------------------------------------------------- registrations

  async #storedRegistrations(): Promise<Registration[]> {
    const registrations: Registration[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.#options.store.list(REGISTRATIONS, {
        cursor: cursor ?? undefined,
      });
      for (const entry of page.entries) {
        const value = entry.value;
        if (
          typeof value === "object" && value !== null &&
          !Array.isArray(value) && typeof value.name === "string" &&
          typeof value.url === "string"
        ) {
          registrations.push({
            name: value.name,
            url: value.url,
            tools: Array.isArray(value.tools)
              ? value.tools.filter((tool) => typeof tool === "string")
              : null,
            registered_at: String(value.registered_at ?? ""),
          });
        }
      }
      cursor = page.cursor;
    } while (cursor);
    return registrations;
  }

  /** Registrations made or removed by other daemons sharing the store. */
  async #reconcile(): Promise<void> {
    let stored: Registration[];
    try {
      stored = await this.#storedRegistrations();
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
      if (this.upstreams.has(registration.name)) continue;
      const upstream = this.#add(
        registration.name,
        registration.name,
        "registered",
        httpTarget(registration.url),
        registration.tools ?? undefined,
      );
      await upstream.connect().catch(() => {});
    }
    this.#rebuild();
  }

  async register(
    name: string,
    url: string,
    tools: readonly string[] | undefined,
  ): Promise<Upstream> {
    if (!UPSTREAM_NAME.test(name)) {
      throw new ToolError(
        `Invalid name "${name}": use 1-40 lower-case letters, digits, '-' or single '_'`,
      );
    }
    if (RESERVED.has(name) || this.upstreams.has(name)) {
      throw new ToolError(
        `A server named "${name}" is already registered (${
          this.upstreams.get(name)?.source ?? "reserved"
        }). Unregister it first or pick another name.`,
      );
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ToolError(
        `Invalid url "${url}": give the server's streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp`,
      );
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new ToolError(
        `Invalid url "${url}": only http and https MCP endpoints can be registered (stdio servers go in the config file)`,
      );
    }
    const same = [...this.upstreams.values()].find((upstream) =>
      upstream.target.kind === "http" && upstream.target.url === parsed.href
    );
    if (same) {
      throw new ToolError(
        `${parsed.href} is already registered as "${same.name}"`,
      );
    }
    const upstream = this.#newUpstream(
      name,
      name,
      "registered",
      httpTarget(parsed.href),
      tools,
    );
    try {
      await upstream.connect();
    } catch (error) {
      await upstream.close();
      throw new ToolError(
        `Cannot reach an MCP server at ${parsed.href}: ${
          messageOf(error)
        }. Nothing was registered.`,
      );
    }
    if (tools) {
      const available = await upstream.allToolNames();
      const unknown = tools.filter((tool) => !available.includes(tool));
      if (unknown.length > 0) {
        await upstream.close();
        throw new ToolError(
          `${parsed.href} has no tool ${
            unknown.map((tool) => `"${tool}"`).join(", ")
          }. Its tools: ${available.join(", ")}. Nothing was registered.`,
        );
      }
    }
    const record: Registration = {
      name,
      url: parsed.href,
      tools: tools ? [...tools] : null,
      registered_at: new Date(this.#clock()).toISOString(),
    };
    const key = [...REGISTRATIONS, name];
    const committed = await this.#options.store.commit({
      checks: [{ key, version: null }],
      mutations: [{ type: "set", key, value: { ...record } }],
    }).catch(async (error) => {
      await upstream.close();
      throw new ToolError(
        `Cannot save the registration: ${
          messageOf(error)
        }. Nothing was registered.`,
      );
    });
    if (!committed.ok) {
      await upstream.close();
      throw new ToolError(
        `A server named "${name}" was just registered by another daemon sharing this store.`,
      );
    }
    this.upstreams.set(name, upstream);
    this.#log.info("registered", { upstream: name, url: parsed.href });
    this.#rebuild();
    return upstream;
  }

  async unregister(name: string): Promise<void> {
    const upstream = this.upstreams.get(name);
    if (!upstream) {
      throw new ToolError(
        `No server named "${name}". Registered: ${this.#names().join(", ")}`,
      );
    }
    if (upstream.source !== "registered") {
      throw new ToolError(
        upstream.source === "builtin"
          ? `"${name}" is a built-in server; disable it with --servers instead.`
          : `"${name}" comes from the config file; remove it there and restart.`,
      );
    }
    await this.#options.store.delete([...REGISTRATIONS, name]);
    this.upstreams.delete(name);
    await upstream.close();
    this.#log.info("unregistered", { upstream: name });
    this.#rebuild();
  }

  // ---------------------------------------------------------- discovery

  /** `discover_servers`: probes what the config names and what daemons announced; registers nothing. */
  async discover(network?: string): Promise<{ [key: string]: JsonValue }> {
    const discovery = this.#options.discovery;
    if (!discovery) throw new ToolError("Discovery is not set up here.");
    let report;
    try {
      report = await discoverTargets({
        config: this.config.discovery,
        store: discovery.store,
        instance: discovery.instance,
        network,
        fetchFn: this.#options.fetchFn,
      });
    } catch (error) {
      throw new ToolError(messageOf(error));
    }
    const self = discovery.selfUrl();
    const byUrl = new Map<string, string>();
    for (const upstream of this.upstreams.values()) {
      if (upstream.target.kind === "http") {
        byUrl.set(upstream.target.url, upstream.name);
      }
    }
    const servers = report.servers
      .filter((server) => server.url !== self)
      .map((server) => ({
        ...server,
        registered_as: byUrl.get(new URL(server.url).href) ?? null,
      }));
    return {
      network: report.network,
      servers,
      reachable: servers.filter((server) => server.reachable).length,
    };
  }

  /** With `discovery.auto_register`: reachable, unregistered servers are registered under their own name. */
  async #autoRegister(): Promise<void> {
    const found = await this.discover();
    const servers = Array.isArray(found.servers) ? found.servers : [];
    for (const server of servers) {
      if (
        typeof server !== "object" || server === null ||
        Array.isArray(server) || server.reachable !== true ||
        server.registered_as !== null || typeof server.url !== "string"
      ) continue;
      const base = String(server.server_name ?? "discovered").toLowerCase()
        .replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 32) ||
        "discovered";
      let name = base;
      for (let n = 2; this.upstreams.has(name) || RESERVED.has(name); n++) {
        name = `${base}-${n}`;
      }
      await this.register(name, server.url, undefined).then(
        () => this.#log.info("auto_registered", { upstream: name }),
        (error) =>
          this.#log.warn("auto_register_failed", {
            url: server.url,
            error: messageOf(error),
          }),
      );
    }
  }

  #names(): string[] {
    return [...this.upstreams.keys()].sort();
  }

  get(name: string): Upstream {
    const upstream = this.upstreams.get(name);
    if (!upstream) {
      throw new ToolError(
        `No server named "${name}". Known: ${this.#names().join(", ")}`,
      );
    }
    return upstream;
  }

  /** Gateway names of one upstream's tools. */
  toolsOf(upstream: Upstream): Tool[] {
    return upstream.tools.map((tool) => ({
      ...tool,
      name: gatewayName(upstream.group, tool.name).name,
    }));
  }

  // ------------------------------------------------------------- views

  adminView(): AdminView {
    const tools: AdminTool[] = [...this.#catalog.entries()].map((
      [name, entry],
    ) => ({
      name,
      group: entry.group,
      tool: entry.tool,
      shortened: entry.shortened,
      description: entry.listing.description ?? "",
    }));
    return {
      generated_at: new Date(this.#clock()).toISOString(),
      version: VERSION,
      health_interval_ms: this.config.health_interval_ms,
      balance: this.config.balance,
      servers: [...this.upstreams.values()]
        .sort(byName)
        .map((upstream) => upstream.view()),
      tools,
    };
  }

  health(): { [key: string]: JsonValue } {
    const upstreams: { [key: string]: JsonValue } = {};
    let unhealthy = 0;
    for (const upstream of this.upstreams.values()) {
      upstreams[upstream.name] = upstream.state;
      if (upstream.state !== "healthy") unhealthy++;
    }
    return {
      status: unhealthy > 0 ? "degraded" : "ok",
      upstreams,
      tools: this.#catalog.size,
    };
  }

  metrics(): Metric[] {
    const all = [...this.upstreams.values()];
    const labels = (upstream: Upstream) => ({
      upstream: upstream.name,
      group: upstream.group,
    });
    return [
      {
        name: "agentd_gateway_upstream_up",
        help: "1 when the upstream is healthy",
        type: "gauge",
        samples: all.map((upstream) => ({
          labels: labels(upstream),
          value: upstream.state === "healthy" ? 1 : 0,
        })),
      },
      {
        name: "agentd_gateway_upstream_calls_total",
        help: "Tool calls routed to each upstream",
        type: "counter",
        samples: all.map((upstream) => ({
          labels: labels(upstream),
          value: upstream.calls,
        })),
      },
      {
        name: "agentd_gateway_upstream_errors_total",
        help: "Routed calls that failed or returned an error",
        type: "counter",
        samples: all.map((upstream) => ({
          labels: labels(upstream),
          value: upstream.errors,
        })),
      },
      {
        name: "agentd_gateway_upstream_call_duration_ms",
        help: "Routed call duration in milliseconds (recent calls)",
        type: "summary",
        samples: all.flatMap((upstream) =>
          upstream.latency.samples(labels(upstream))
        ),
      },
      {
        name: "agentd_gateway_upstream_restarts_total",
        help: "Restarts of stdio upstreams",
        type: "counter",
        samples: all.map((upstream) => ({
          labels: labels(upstream),
          value: upstream.restarts,
        })),
      },
    ];
  }

  /** Shutdown: no more checks; calls already running were drained by the host; close every upstream. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#timer);
    clearInterval(this.#discoveryTimer);
    await this.#checking?.catch(() => {});
    await Promise.all(
      [...this.upstreams.values()].map((upstream) => upstream.close()),
    );
  }
}

function httpTarget(url: string): UpstreamTarget {
  return { kind: "http", url, headers: {}, passThroughAuth: false };
}
