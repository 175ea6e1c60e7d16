// A server spec brought to life: its phase, its runtime context, its
// in-flight calls and counters. One HostedServer serves every transport
// (stdio, HTTP sessions, in-process links) of one server in this process.

import { AsyncLocalStorage } from "node:async_hooks";
import {
  InFlight,
  type Phase,
  type PhaseState,
  PhaseTracker,
} from "../../platform/lifecycle.ts";
import type { Logger } from "../../platform/log.ts";
import { LatencyWindow, type Metric } from "../../platform/metrics.ts";
import {
  type JsonValue,
  scoped,
  type Store,
} from "../../platform/store/mod.ts";

const PHASES: Phase[] = ["start", "running", "error", "shutdown"];
/** The phase /health and /metrics show for a server `serve` has not loaded yet. */
export const NOT_LOADED = "not_loaded";
import type { AdminSection } from "./admin.ts";
import {
  type AnyServerSpec,
  type BrowserRequest,
  type CallbackOutcome,
  type DynamicPrompts,
  type DynamicResources,
  type DynamicTools,
  identityOf,
  type Peer,
  type ServerFacts,
  type ServerIcons,
  type ServerRuntime,
  ToolError,
} from "./mod.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Tool } from "../../platform/mcp_sdk_types.ts";
import {
  type DaemonOrigin,
  daemonOrigin,
} from "../../platform/daemon_origin.ts";
import type { Guard } from "./policy/guard.ts";
import { runsTasks, TaskBoard } from "./tasks.ts";
import { ownListings, runToolCall, toolCatalog } from "./tool_call.ts";
import type { Caller } from "../../platform/identity.ts";

/** Something connected to this server that wants to hear about changes (one per MCP session). */
export interface ServerListener {
  resourceUpdated(uri: string): void;
  toolsChanged(): void;
  resourcesChanged(): void;
  promptsChanged(): void;
}

export interface HostOptions {
  store: Store;
  log: Logger;
  /** The server's config section, already validated by the daemon's schema. */
  config: Record<string, unknown>;
  dataDir: string;
  /** Defaults to the process environment. */
  env?: Readonly<Record<string, string>>;
  clock?: () => number;
  /** The other servers of this process (for specs that aggregate). */
  peers?: readonly Peer[];
  /** This process's HTTP address once it listens. */
  address?: () => string | undefined;
  /** The daemon's origin as browsers see it; by default derived from `address` alone. */
  ownOrigin?: () => DaemonOrigin;
  /** Hosted alone by `agentd mcp <id>` (default false: beside others in `serve`). */
  alone?: boolean;
  /** The daemon's policy and audit trail; every tool call passes it when set. */
  guard?: Guard;
  /**
   * Where tools/call runs as MCP tasks keep them: the daemon's one board,
   * so /admin sees every server's; by default a board of the server's own
   * on its store.
   */
  tasks?: TaskBoard;
}

/** What a server's Start phase needs, prepared inside that phase. */
export type HostSetup = () => Promise<Omit<HostOptions, "log" | "clock">>;

export interface HostStart {
  setup: HostSetup;
  clock?: () => number;
  /** Retry a failed start on tool calls, at most once per this many ms (off when absent). */
  retryAfterMs?: number;
}

/** A server loaded on first use (`serve`): what it is until then, and how to load it. */
export interface HostDeferral {
  facts: ServerFacts;
  /** Its tools/list entries, generated (tools/<id>/tool_listings.ts). */
  listings: readonly Tool[];
  load(): Promise<AnyServerSpec>;
  icons?: ServerIcons;
  /**
   * A check at the daemon's start that needs none of the server's modules
   * (tools/<id>/preflight.ts): what /health must know from the first request.
   */
  preflight?(options: HostOptions): Promise<Preflight>;
}

/** What a deferred server's preflight found. */
export type Preflight =
  /** Its start has work now (a watch to run, a vault to unseal): it starts with the daemon. */
  | { start: string }
  /** It surely cannot work now: /health shows `error` with this until a call loads it. */
  | { error: string }
  /** Nothing to say: it loads on first use. */
  | undefined;

export interface ServerHealth {
  [key: string]: JsonValue;
}

export class HostedServer {
  #spec: AnyServerSpec;
  /** Set while the server is not loaded (HostedServer.deferred). */
  #deferral: HostDeferral | undefined;
  #loading: Promise<void> | undefined;
  /**
   * Runs a function in the async context the host was made in: a server
   * loaded inside some caller's call must not keep that caller's context
   * (an agent run's, say) in what it starts.
   */
  readonly #outside = AsyncLocalStorage.snapshot();
  readonly log: Logger;
  readonly phase: PhaseTracker;
  readonly inFlight = new InFlight();
  guard: Guard | undefined;
  /** The tasks of this server's task-augmented calls, once the Start phase set it up. */
  tasks: TaskBoard | undefined;
  readonly listeners = new Set<ServerListener>();
  #runtime: ServerRuntime<unknown> | undefined;
  readonly #setup: HostSetup;
  readonly #clock: () => number;
  readonly #retryAfterMs: number | undefined;
  #lastAttempt = 0;
  #retrying: Promise<void> | undefined;
  #calls = 0;
  #errors = 0;
  readonly #tools = new Map<
    string,
    { calls: number; errors: number; latency: LatencyWindow }
  >();
  /** Extra numbers a transport adds to /health (e.g. open sessions). */
  readonly gauges = new Map<string, () => number>();

  private constructor(
    spec: AnyServerSpec,
    log: Logger,
    options: HostStart,
  ) {
    this.#spec = spec;
    this.log = log;
    this.#setup = options.setup;
    this.#clock = options.clock ?? Date.now;
    this.#retryAfterMs = options.retryAfterMs;
    this.phase = new PhaseTracker({
      clock: options.clock,
      onChange: (state, previous) =>
        log.info("phase", {
          from: previous.phase,
          to: state.phase,
          error: state.error,
        }),
    });
  }

  /**
   * Runs the Start phase. Never throws: a server that cannot start is left in
   * `error` with the reason, so the daemon keeps serving the others.
   */
  static async start(
    spec: AnyServerSpec,
    options: HostOptions,
  ): Promise<HostedServer> {
    const { log, clock, ...prepared } = options;
    return await HostedServer.open(spec, {
      log,
      clock,
      setup: () => Promise.resolve(prepared),
    });
  }

  /**
   * Like `start`, with what the server needs (settings, store) prepared by
   * `setup` inside the Start phase, so a failure there leaves the server in
   * `error` too. With `retryAfterMs`, a tool call to the server in `error`
   * runs the whole Start phase again (see `retryStart`).
   */
  static async open(
    spec: AnyServerSpec,
    options: HostStart & { log: Logger },
  ): Promise<HostedServer> {
    const log = options.log.child({ server: spec.id });
    const host = new HostedServer(spec, log, options);
    await host.#startPhase();
    host.#lastAttempt = host.#clock();
    return host;
  }

  /**
   * A server loaded and started on first use (`load()`, which sessions,
   * in-process connections and links call): until then its spec is a stub
   * made of `deferral.facts` (no tools, no start) and it is `not_loaded`.
   */
  static deferred(
    deferral: HostDeferral,
    options: HostStart & {
      log: Logger;
      /** The daemon's policy and task board, known before it loads (/admin's approvals). */
      guard?: Guard;
      tasks?: TaskBoard;
      /** Its preflight's finding that it cannot work now. */
      error?: string;
    },
  ): HostedServer {
    const { facts } = deferral;
    const stub: AnyServerSpec = {
      id: facts.id,
      namespace: facts.namespace,
      title: facts.title,
      version: facts.version,
      instructions: facts.instructions,
      tools: [],
      listings: deferral.listings,
      icons: deferral.icons,
      callbacks: Object.fromEntries(
        Object.entries(facts.callbacks).map(([path, { form }]) => [path, {
          form,
          answer: () => Promise.reject(new Error(`${facts.id} is not loaded`)),
        }]),
      ),
      start: () => Promise.reject(new Error(`${facts.id} is not loaded`)),
    };
    const host = new HostedServer(
      stub,
      options.log.child({ server: facts.id }),
      options,
    );
    host.#deferral = deferral;
    host.guard = options.guard;
    host.tasks = options.tasks;
    if (options.error !== undefined) {
      host.phase.set("error", `Cannot start ${facts.id}: ${options.error}`);
    }
    return host;
  }

  get spec(): AnyServerSpec {
    return this.#spec;
  }

  /** Whether the server's module is loaded (always, but for HostedServer.deferred before `load`). */
  get loaded(): boolean {
    return this.#deferral === undefined;
  }

  /** A deferred server's facts until it loads. */
  get facts(): ServerFacts | undefined {
    return this.#deferral?.facts;
  }

  /** The tools/list entries of a deferred server until it loads. */
  get deferredListings(): readonly Tool[] | undefined {
    return this.#deferral?.listings;
  }

  /**
   * Loads a deferred server's module and runs its Start phase (once; callers
   * meanwhile share it). Never throws: a module that cannot load leaves the
   * server in `error`, as a failed start does.
   */
  load(): Promise<void> {
    const deferral = this.#deferral;
    if (this.#loading !== undefined) return this.#loading;
    if (deferral === undefined) return Promise.resolve();
    this.#loading = this.#outside(async () => {
      if (this.phase.phase === "shutdown") return;
      const done = this.inFlight.begin();
      try {
        this.log.info("load", {});
        this.#spec = await deferral.load();
        await this.#startPhase();
        this.#lastAttempt = this.#clock();
      } catch (error) {
        this.phase.set("error", `Cannot load ${this.id}: ${messageOf(error)}`);
      } finally {
        // Loaded once started (or failed): `loaded` never shows a half start.
        this.#deferral = undefined;
        done();
      }
      // Sessions opened meanwhile (the gateway's) see its real tools.
      this.notifyToolsChanged();
    });
    return this.#loading;
  }

  /**
   * For a server in `error` with retries on: runs the Start phase again,
   * at most once per `retryAfterMs` (a failing start may be slow, e.g. a
   * store's connect timeout); callers meanwhile share that one attempt.
   * Things a person fixes without restarting the client (a display that
   * appears, a browser installed, a key file written, a store back up)
   * then take effect on the next call.
   */
  async retryStart(): Promise<void> {
    // Only a failed start: a started server in `error` (a display lost at
    // run time) recovers by itself and must not be started twice.
    if (
      this.#retryAfterMs === undefined || this.phase.phase !== "error" ||
      this.#runtime !== undefined
    ) {
      return;
    }
    if (this.#retrying === undefined) {
      if (this.#clock() - this.#lastAttempt < this.#retryAfterMs) return;
      // Counted in flight: shutdown waits for it rather than racing it.
      const done = this.inFlight.begin();
      this.log.info("start_retry", { error: this.phase.state.error });
      this.#retrying = this.#startPhase().finally(() => {
        this.#lastAttempt = this.#clock();
        this.#retrying = undefined;
        done();
        // Sessions may now see more tools (an aggregator's upstreams).
        if (this.phase.phase === "running") this.notifyToolsChanged();
      });
    }
    await this.#retrying;
  }

  /** One run of the Start phase: `running`, or `error` with the reason. */
  async #startPhase(): Promise<void> {
    const spec = this.spec;
    try {
      const options = await this.#setup();
      this.guard = options.guard;
      this.tasks = options.tasks ?? this.tasks ??
        new TaskBoard({
          store: scoped(options.store, ["tasks"]),
          log: this.log,
        });
      // What a dead daemon left is settled in the background (and on each read).
      if (runsTasks(spec)) void this.tasks.start();
      const config = spec.config
        ? spec.config.parse(options.config)
        : options.config;
      const runtime = await spec.start({
        store: options.store,
        log: this.log,
        config,
        dataDir: options.dataDir,
        env: options.env ?? Deno.env.toObject(),
        resourceUpdated: (uri) => this.notifyResourceUpdated(uri),
        toolsChanged: () => this.notifyToolsChanged(),
        resourcesChanged: () => {
          for (const listener of this.listeners) listener.resourcesChanged();
        },
        promptsChanged: () => {
          for (const listener of this.listeners) listener.promptsChanged();
        },
        peers: options.peers ?? [],
        address: options.address ?? (() => undefined),
        ownOrigin: options.ownOrigin ??
          (() =>
            daemonOrigin({
              address: options.address?.(),
              bindHost: "127.0.0.1",
              port: 0,
              allowedHosts: [],
            })),
        alone: options.alone ?? false,
        guard: options.guard,
        setPhase: (phase, reason) => this.#movePhase(phase, reason),
        own: {
          list: () => ownListings(this),
          has: (name) => toolCatalog(this).has(name),
          call: (name, args, call) =>
            runToolCall(this, {
              connection: call.connection ?? "",
              name,
              args,
              call,
              logSession: call.sessionId,
            }),
        },
      });
      if (this.phase.phase === "shutdown") {
        // Stopped while a retry was starting it: nobody else will stop it.
        await runtime.stop?.().catch((error) =>
          this.log.error("stop_failed", { error: messageOf(error) })
        );
        return;
      }
      this.#runtime = runtime;
      this.phase.set("running");
    } catch (error) {
      if (this.phase.phase === "shutdown") return;
      const reason = `Cannot start ${spec.id}: ${messageOf(error)}`;
      // The same failure again keeps its `since`: when the trouble began.
      if (this.phase.phase === "error" && this.phase.state.error === reason) {
        this.log.info("start_retry_failed", { error: reason });
      } else {
        this.phase.set("error", reason);
      }
    }
  }

  #movePhase(phase: "running" | "error", reason?: string): void {
    const now = this.phase.state;
    if (this.#runtime === undefined) return;
    if (now.phase !== "running" && now.phase !== "error") return;
    if (now.phase === phase && now.error === reason) return;
    this.phase.set(phase, phase === "error" ? reason : undefined);
  }

  get id(): string {
    return this.#spec.id;
  }

  /** The handler context; throws a ToolError the caller can read unless the server is running. */
  context(): unknown {
    const runtime = this.#runtime;
    const state = this.phase.state;
    if (runtime === undefined || state.phase !== "running") {
      const retry = this.#retryAfterMs !== undefined && state.phase === "error"
        ? ` Each call retries the start (at most every ${
          Math.ceil(this.#retryAfterMs / 1000)
        } s): fix the cause, then call again.`
        : "";
      throw new ToolError(
        `Server "${this.id}" is not running (phase ${state.phase} since ${state.since}` +
          (state.error ? `: ${state.error}` : "") + ")" + retry,
      );
    }
    return runtime.context;
  }

  countCall(tool: string, ok: boolean, ms: number): void {
    this.#calls++;
    if (!ok) this.#errors++;
    let stats = this.#tools.get(tool);
    if (!stats) {
      stats = { calls: 0, errors: 0, latency: new LatencyWindow(256) };
      this.#tools.set(tool, stats);
    }
    stats.calls++;
    if (!ok) stats.errors++;
    stats.latency.observe(ms);
  }

  /** Prometheus metrics: phase, calls, errors and latency per tool, plus the server's own. */
  metrics(): Metric[] {
    const server = { server: this.id };
    const state = this.phase.state;
    const perTool = [...this.#tools.entries()];
    const metrics: Metric[] = [
      {
        name: "agentd_server_phase",
        help: "1 for the phase each server is in",
        type: "gauge",
        samples: [...PHASES, NOT_LOADED].map((phase) => ({
          labels: { ...server, phase },
          value: phase === (this.loaded ? state.phase : NOT_LOADED) ? 1 : 0,
        })),
      },
      {
        name: "agentd_tool_calls_total",
        help: "Tool calls, by server and tool",
        type: "counter",
        samples: perTool.map(([tool, stats]) => ({
          labels: { ...server, tool },
          value: stats.calls,
        })),
      },
      {
        name: "agentd_tool_errors_total",
        help: "Tool calls that returned an error, by server and tool",
        type: "counter",
        samples: perTool.map(([tool, stats]) => ({
          labels: { ...server, tool },
          value: stats.errors,
        })),
      },
      {
        name: "agentd_tool_duration_ms",
        help: "Tool call duration in milliseconds (recent calls)",
        type: "summary",
        samples: perTool.flatMap(([tool, stats]) =>
          stats.latency.samples({ ...server, tool })
        ),
      },
      {
        name: "agentd_tool_calls_in_flight",
        help: "Tool calls running now",
        type: "gauge",
        samples: [{ labels: server, value: this.inFlight.count }],
      },
    ];
    for (const [name, read] of this.gauges) {
      metrics.push({
        name: `agentd_${name}`,
        help: `${name} of each server`,
        type: "gauge",
        samples: [{ labels: server, value: read() }],
      });
    }
    if (this.#runtime?.metrics && state.phase === "running") {
      try {
        metrics.push(...this.#runtime.metrics());
      } catch (error) {
        this.log.warn("metrics_failed", { error: messageOf(error) });
      }
    }
    return metrics;
  }

  notifyResourceUpdated(uri: string): void {
    for (const listener of this.listeners) listener.resourceUpdated(uri);
  }

  notifyToolsChanged(): void {
    for (const listener of this.listeners) listener.toolsChanged();
  }

  /** Lets the running server drop what it kept for an ended session. */
  sessionClosed(sessionId: string): void {
    if (this.phase.phase !== "running") return;
    try {
      this.#runtime?.sessionClosed?.(sessionId);
    } catch (error) {
      this.log.warn("session_closed_hook_failed", { error });
    }
  }

  /** The server's run-time tools, while it runs. */
  dynamicTools(): DynamicTools | undefined {
    return this.phase.phase === "running"
      ? this.#runtime?.dynamicTools
      : undefined;
  }

  /** The server's run-time resources, while it runs. */
  dynamicResources(): DynamicResources | undefined {
    return this.phase.phase === "running"
      ? this.#runtime?.dynamicResources
      : undefined;
  }

  /** The server's run-time prompts, while it runs. */
  dynamicPrompts(): DynamicPrompts | undefined {
    return this.phase.phase === "running"
      ? this.#runtime?.dynamicPrompts
      : undefined;
  }

  /** The server's `/admin` section, as `viewer` may see it, while it runs; undefined when it has none. */
  async admin(viewer: Caller): Promise<AdminSection | undefined> {
    const runtime = this.#runtime;
    if (!runtime?.admin || this.phase.phase !== "running") return undefined;
    try {
      return await runtime.admin(viewer);
    } catch (error) {
      this.log.warn("admin_failed", { error: messageOf(error) });
      return {
        title: this.spec.title,
        fields: [{
          key: "error",
          label: "Error",
          value: messageOf(error),
          format: "error",
        }],
        tables: [],
      };
    }
  }

  /** The server's handler of a callback path it declares (ServerSpec.callbacks), while it runs. */
  callback(
    path: string,
  ):
    | ((
      params: URLSearchParams,
      request: BrowserRequest,
    ) => Promise<CallbackOutcome>)
    | undefined {
    const runtime = this.#runtime;
    const callback = Object.hasOwn(this.spec.callbacks ?? {}, path)
      ? this.spec.callbacks?.[path]
      : undefined;
    // Not loaded yet: the browser's request loads it (a redirect may come
    // back for a flow begun before the daemon restarted).
    if (this.#deferral !== undefined && callback !== undefined) {
      return async (params, request) => {
        await this.load();
        const loaded = this.callback(path);
        if (loaded !== undefined) return await loaded(params, request);
        const state = this.phase.state;
        return {
          ok: false,
          status: 503,
          title: "Not available",
          message: `${this.spec.title} is not running (${state.phase}` +
            (state.error ? `: ${state.error}` : "") + ").",
        };
      };
    }
    if (
      this.phase.phase !== "running" || runtime === undefined ||
      callback === undefined
    ) {
      return undefined;
    }
    return (params, request) =>
      callback.answer(runtime.context, params, request);
  }

  async health(): Promise<ServerHealth> {
    const state: PhaseState = this.phase.state;
    const deferral = this.#deferral;
    const health: ServerHealth = {
      // Not loaded yet (`serve` loads on first use) is not failed.
      phase: deferral && state.phase === "start" ? NOT_LOADED : state.phase,
      since: state.since,
      ...identityOf(this.spec),
      version: this.spec.version,
      in_flight: this.inFlight.count,
      calls: this.#calls,
      errors: this.#errors,
    };
    if (state.error !== undefined) health.error = state.error;
    for (const [name, read] of this.gauges) health[name] = read();
    if (this.#runtime?.health && state.phase === "running") {
      try {
        const details = await this.#runtime.health();
        health.details = details;
        // A running server may still be degraded (e.g. serving from a cache).
        if (
          typeof details === "object" && details !== null &&
          !Array.isArray(details) &&
          details.status === "degraded"
        ) {
          health.degraded = true;
        }
      } catch (error) {
        health.details = { error: messageOf(error) };
        health.degraded = true;
      }
    }
    return health;
  }

  /** The Shutdown phase: wait for running calls (bounded), then stop the server. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.phase.phase === "shutdown") return;
    // Started, even if in `error` since (a lost display): its stop still runs.
    const started = this.#runtime !== undefined;
    this.phase.set("shutdown");
    const drained = await this.inFlight.idle(timeoutMs);
    if (!drained) {
      this.log.warn("drain_timeout", {
        in_flight: this.inFlight.count,
        timeout_ms: timeoutMs,
      });
    }
    // Tasks still running past the drain end `failed`, saying why.
    await this.tasks?.stopServer(this.id);
    // The audit records of the calls just drained are written before exit.
    await this.guard?.audit.flush();
    if (started && this.#runtime?.stop) {
      try {
        await this.#runtime.stop();
      } catch (error) {
        this.log.error("stop_failed", { error: messageOf(error) });
      }
    }
  }
}
