// One upstream MCP server as the gateway sees it: a client connection (an
// in-process link, streamable HTTP, or a stdio child process), its tools, its
// health and its counters. Reconnection lives here; routing does not.

import type { Client } from "../../platform/mcp_sdk_client_class.ts";
import {
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  type GetPromptResult,
  McpError,
  type Prompt,
  PromptListChangedNotificationSchema,
  type ReadResourceResult,
  type Resource,
  ResourceListChangedNotificationSchema,
  type Tool,
  ToolListChangedNotificationSchema,
  type Transport,
} from "../../platform/mcp_sdk_types.ts";
import { AsyncLocalStorage } from "node:async_hooks";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import { LatencyWindow } from "../../platform/metrics.ts";
import {
  type CallContext,
  type CallJudge,
  type DirectLink,
  linkedSession,
  type ListRequest,
  type Peer,
  ToolError,
} from "../kit/mod.ts";
import type { Caller } from "../../platform/identity.ts";
import type { AdminServer, UpstreamState } from "./admin_view.ts";

/** The session id built-in servers see for calls of gateway session `id`. */
export function forwardedSession(id: string): string {
  return `gateway:${id}`;
}
import { describeFailure } from "./failures.ts";
import { StdioUpstreamTransport } from "../kit/transport/stdio_client.ts";
import { HttpClientTransport } from "../kit/transport/http_client.ts";
import { DirectCalls } from "./direct_calls.ts";
import {
  deliverInTurns,
  newClient,
  openTransport,
  passThrough,
  type UpstreamTarget,
} from "./transports.ts";
import { duration, withDeadline } from "./deadlines.ts";
import { allToolNames, exposedTools } from "./upstream_tool_list.ts";

export type { UpstreamTarget } from "./transports.ts";

export type UpstreamSource = AdminServer["source"];

export interface UpstreamOptions {
  name: string;
  group: string;
  source: UpstreamSource;
  target: UpstreamTarget;
  /** Only these tools are exposed. */
  tools?: readonly string[];
  log: Logger;
  connectTimeoutMs: number;
  healthTimeoutMs: number;
  callTimeoutMs: number;
  /** A call that keeps reporting progress ends after this long in all. */
  callMaxMs: number;
  /** Called after every change of state or of the tool list. */
  onChange(upstream: Upstream, previous: UpstreamState): void;
  clock?: () => number;
  /** Judges and audits calls of an upstream outside this process (built-in servers judge their own). */
  guard?: CallJudge;
}

/** A failure that happened before the upstream could have run the call: safe to send elsewhere. */
export class UpstreamUnreachable extends Error {
  override name = "UpstreamUnreachable";
}

/** The policy refused the call (or no person approved it): it never reached the upstream. */
export class CallRefused extends Error {
  override name = "CallRefused";
  constructor(readonly result: CallToolResult) {
    super(
      result.content.map((block) => block.type === "text" ? block.text : "")
        .join(" ").trim() || "Denied by policy",
    );
  }
}

const RESTART_FIRST_MS = 500;
const RESTART_MAX_MS = 30_000;
/** A stdio upstream that lived this long has its restart backoff reset. */
const STABLE_MS = 10_000;

export class Upstream {
  readonly name: string;
  readonly group: string;
  readonly source: UpstreamSource;
  readonly target: UpstreamTarget;
  readonly filter: ReadonlySet<string> | undefined;
  state: UpstreamState = "connecting";
  since: number;
  lastCheck: number | undefined;
  latencyMs: number | undefined;
  lastError: string | undefined;
  /** Exposed tools; kept while unhealthy so errors can say what is missing. */
  tools: Tool[] = [];
  /** The upstream's resources and prompts as it lists them (when it declares them). */
  resources: Resource[] = [];
  prompts: Prompt[] = [];
  calls = 0;
  errors = 0;
  inFlight = 0;
  restarts = 0;
  /** Calls meant for this upstream that a replica took (it was down or failed to answer). */
  reroutes = 0;
  readonly latency = new LatencyWindow(256);
  readonly #options: UpstreamOptions;
  readonly #clock: () => number;
  #client: Client | undefined;
  #connecting: Promise<void> | undefined;
  /**
   * Built-in upstreams: calls take the kit's direct link (no JSON-RPC, no SDK
   * checks at either end), one per caller identity so the server sees who calls.
   * The SDK client stays for initialize, ping, list_changed and resources.
   */
  readonly #links = new Map<string, DirectLink>();
  /** Built-in upstreams: an SDK client per agent, so resources and prompts are read as that agent. */
  readonly #agentClients = new Map<string, Promise<Client>>();
  #pid: number | null = null;
  /** Bumped whenever a connection is dropped on purpose; a stale child's exit is ignored. */
  #generation = 0;
  #connectedAt = 0;
  #restartTimer: ReturnType<typeof setTimeout> | undefined;
  #restartDelay = RESTART_FIRST_MS;
  #closed = false;
  /**
   * Runs a function in the async context the upstream was made in (the
   * gateway's start): a built-in server first connected inside a call must
   * not keep that caller's context (an agent run's) in its connection.
   */
  readonly #outside = AsyncLocalStorage.snapshot();

  constructor(options: UpstreamOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.name = options.name;
    this.group = options.group;
    this.source = options.source;
    this.target = options.target;
    this.filter = options.tools ? new Set(options.tools) : undefined;
    this.since = this.#clock();
  }

  get pid(): number | null {
    return this.#pid;
  }

  has(tool: string): boolean {
    return this.#listed(tool) !== undefined;
  }

  #index: { tools: Tool[]; byName: Map<string, Tool> } = {
    tools: [],
    byName: new Map(),
  };

  /** The exposed tool named `tool` (a map per tool list, not a scan per call). */
  #listed(tool: string): Tool | undefined {
    if (this.#index.tools !== this.tools) {
      this.#index = {
        tools: this.tools,
        byName: new Map(this.tools.map((listed) => [listed.name, listed])),
      };
    }
    return this.#index.byName.get(tool);
  }

  /** Connects (or reconnects) and reads the tool list; rejects with the reason, leaving the upstream unhealthy. */
  connect(): Promise<void> {
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #connect(): Promise<void> {
    const target = this.target;
    if (target.kind === "builtin" && target.peer.loaded?.() === false) {
      // A server `serve` loads on first use: listed from its generated
      // listings meanwhile, loaded and connected on the first call (#ready).
      this.tools = (target.peer.listings ?? []).filter((tool) =>
        this.filter === undefined || this.filter.has(tool.name)
      );
      this.lastCheck = this.#clock();
      // What keeps it from starting, known without loading it (no display),
      // makes it down as a failed start would.
      const problem = target.peer.error();
      if (problem !== undefined) {
        this.#setState("unhealthy", problem);
        throw new UpstreamUnreachable(problem);
      }
      this.#setState("healthy");
      return;
    }
    await this.#dropClient();
    const started = performance.now();
    const client = await newClient();
    let transport: Transport | undefined;
    try {
      transport = await this.#openTransport();
      // The SDK's own timeout is a backstop: ours fires first and says which step.
      const connected = client.connect(transport, {
        timeout: this.#options.connectTimeoutMs + 1000,
      });
      await withDeadline(connected, {
        step: "initialize",
        ms: this.#options.connectTimeoutMs,
        setting: "connect_timeout_ms",
      });
      this.#client = client;
      deliverInTurns(transport);
      if (transport instanceof StdioUpstreamTransport) {
        this.#pid = transport.pid;
      }
      this.#connectedAt = this.#clock();
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        this.refreshTools().catch((error) =>
          this.#options.log.warn("upstream_tools_failed", {
            upstream: this.name,
            error: messageOf(error),
          })
        );
      });
      const refreshLists = () => {
        this.refreshLists().catch((error) =>
          this.#options.log.warn("upstream_lists_failed", {
            upstream: this.name,
            error: messageOf(error),
          })
        );
      };
      client.setNotificationHandler(
        ResourceListChangedNotificationSchema,
        refreshLists,
      );
      client.setNotificationHandler(
        PromptListChangedNotificationSchema,
        refreshLists,
      );
      [this.tools] = await Promise.all([
        this.#listTools(client),
        this.#listResourcesAndPrompts(client),
      ]);
      this.latencyMs = Math.round(performance.now() - started);
      this.lastCheck = this.#clock();
      this.#setState("healthy");
    } catch (error) {
      await client.close().catch(() => {});
      if (this.#client === client) this.#client = undefined;
      const message = describeFailure(error);
      this.lastCheck = this.#clock();
      this.#setState("unhealthy", message);
      throw new UpstreamUnreachable(message);
    }
  }

  #openTransport(): Promise<Transport> {
    const generation = this.#generation;
    return openTransport(this.target, {
      upstream: this.name,
      log: this.#options.log,
      onExit: () => this.#exited(generation),
    });
  }

  /** A stdio child ended: mark it down now and restart it with backoff. */
  #exited(generation: number): void {
    // A child we replaced or closed on purpose is not news.
    if (generation !== this.#generation) return;
    this.#generation++;
    this.#pid = null;
    this.#client = undefined;
    if (this.#closed) return;
    const lived = this.#clock() - this.#connectedAt;
    if (lived > STABLE_MS) this.#restartDelay = RESTART_FIRST_MS;
    this.#setState("unhealthy", "process exited");
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    if (this.#closed || this.#restartTimer !== undefined) return;
    const delay = this.#restartDelay;
    this.#restartDelay = Math.min(this.#restartDelay * 2, RESTART_MAX_MS);
    this.#options.log.info("upstream_restart_scheduled", {
      upstream: this.name,
      delay_ms: delay,
    });
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (this.#closed) return;
      // Reconnected meanwhile: a second connect would drop that live child.
      if (this.#client !== undefined && this.state === "healthy") return;
      this.restarts++;
      this.connect().catch(() => this.#scheduleRestart());
    }, delay);
  }

  #listTools(client: Client): Promise<Tool[]> {
    return exposedTools(client, {
      target: this.target,
      filter: this.filter,
      timeoutMs: this.#options.healthTimeoutMs,
    });
  }

  /** Every tool of the upstream, ignoring the filter (to validate a registration). */
  async allToolNames(): Promise<string[]> {
    const client = this.#client;
    if (!client) return [];
    return await allToolNames(client, this.#options.healthTimeoutMs);
  }

  /**
   * The upstream's resources and prompts, when its capabilities declare
   * them; one it cannot list is logged and lists none (its tools still serve).
   */
  async #listResourcesAndPrompts(client: Client): Promise<void> {
    const capabilities = client.getServerCapabilities();
    const options = { timeout: this.#options.healthTimeoutMs };
    const failed = (what: string) => (error: unknown) => {
      this.#options.log.warn("upstream_list_failed", {
        upstream: this.name,
        list: what,
        error: messageOf(error),
      });
      return [];
    };
    const [resources, prompts] = await Promise.all([
      capabilities?.resources
        ? paged(async (cursor) => {
          const page = await client.listResources(
            cursor === undefined ? {} : { cursor },
            options,
          );
          return { items: page.resources, next: page.nextCursor };
        }).catch(failed("resources"))
        : [],
      capabilities?.prompts
        ? paged(async (cursor) => {
          const page = await client.listPrompts(
            cursor === undefined ? {} : { cursor },
            options,
          );
          return { items: page.prompts, next: page.nextCursor };
        }).catch(failed("prompts"))
        : [],
    ]);
    this.resources = resources;
    this.prompts = prompts;
  }

  /** Reads the resource and prompt lists again (the upstream said they changed). */
  async refreshLists(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    await this.#listResourcesAndPrompts(client);
    this.#options.onChange(this, this.state);
  }

  /**
   * Whether `caller` reads (and is listed) this upstream's resources and
   * prompts. The policy judges tool calls only: an agent must not read, with
   * the registration's own credentials, what it could not call. It reads an
   * external upstream's resources and prompts only where the upstream judges
   * it by its own token (pass_through_auth).
   */
  readsFor(caller: Caller): boolean {
    const target = this.target;
    return caller.agent === undefined || target.kind === "builtin" ||
      (target.kind === "http" && target.passThroughAuth);
  }

  /**
   * `resources/read` as `request.caller`: an external upstream gets the
   * caller's token where it passes tokens through, a built-in one sees the
   * caller's agent (as its tools do), so nobody reads through the gateway
   * what the upstream would refuse them.
   */
  async read(uri: string, request: ListRequest): Promise<ReadResourceResult> {
    const client = await this.#clientAs(request);
    return await passThrough.run(
      request.authorization,
      () =>
        client.readResource({ uri }, {
          timeout: this.#options.callTimeoutMs,
          signal: request.signal,
        }),
    );
  }

  /** `prompts/get` as `request.caller` (see `read`). */
  async getPrompt(
    name: string,
    args: Record<string, string>,
    request: ListRequest,
  ): Promise<GetPromptResult> {
    const client = await this.#clientAs(request);
    return await passThrough.run(
      request.authorization,
      () =>
        client.getPrompt({ name, arguments: args }, {
          timeout: this.#options.callTimeoutMs,
          signal: request.signal,
        }),
    );
  }

  /**
   * A built-in server not loaded yet (`serve` loads on first use): loads it
   * and connects, so a call finds it as if it had started with the daemon.
   */
  async #ready(): Promise<void> {
    const target = this.target;
    // Healthy without a client: listed only (not loaded, or being connected).
    if (
      this.#client !== undefined || this.state !== "healthy" ||
      target.kind !== "builtin"
    ) {
      return;
    }
    await this.#outside(async () => {
      await target.peer.load?.();
      await this.connect();
      // A connect begun before the load (a health check) only listed it.
      if (this.#client === undefined) await this.connect();
    });
  }

  /** The SDK client whose requests reach the upstream as `request.caller`. */
  async #clientAs(request: ListRequest): Promise<Client> {
    await this.#ready();
    const client = this.#client;
    if (!client || this.state !== "healthy") {
      throw new UpstreamUnreachable(this.lastError ?? `not connected`);
    }
    const agent = request.caller.agent;
    const target = this.target;
    if (!this.readsFor(request.caller)) {
      throw new ToolError(
        `Upstream ${this.name}'s resources and prompts are read by the operator only (or through pass_through_auth); an agent reaches ${this.name} through its tools`,
      );
    }
    // The main connection is the operator's ({}); external upstreams judge by the token.
    if (target.kind !== "builtin" || agent === undefined) return client;
    let opened = this.#agentClients.get(agent);
    if (opened === undefined) {
      opened = (async () => {
        const own = await newClient();
        await own.connect(await target.peer.connect({ agent }), {
          timeout: this.#options.connectTimeoutMs,
        });
        return own;
      })();
      opened.catch(() => this.#agentClients.delete(agent));
      this.#agentClients.set(agent, opened);
    }
    return await opened;
  }

  async refreshTools(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    this.tools = await this.#listTools(client);
    this.#options.onChange(this, this.state);
  }

  /** One health check: ping; on failure, one reconnect attempt. */
  async check(): Promise<void> {
    if (this.#closed || this.#restartTimer !== undefined) return;
    if (this.#connecting) return;
    // A built-in server not loaded yet has nothing to ping; its listing stands.
    const target = this.target;
    if (target.kind === "builtin" && target.peer.loaded?.() === false) return;
    const client = this.#client;
    const generation = this.#generation;
    if (client) {
      const started = performance.now();
      try {
        await client.ping({ timeout: this.#options.healthTimeoutMs });
        this.latencyMs = Math.round(performance.now() - started);
        this.lastCheck = this.#clock();
        if (this.state !== "healthy") {
          this.tools = await this.#listTools(client);
          await this.#listResourcesAndPrompts(client);
          this.#setState("healthy");
        }
        return;
      } catch (error) {
        this.#options.log.debug("upstream_ping_failed", {
          upstream: this.name,
          error: messageOf(error),
        });
      }
    }
    // The child exited during the ping: its exit already scheduled the restart.
    if (generation !== this.#generation || this.#restartTimer !== undefined) {
      return;
    }
    if (this.target.kind === "stdio" && this.#pid !== null && client) {
      // A live process that does not answer: end it; the exit restarts it.
      this.lastCheck = this.#clock();
      this.#setState("unhealthy", "no answer to ping");
      await client.close().catch(() => {});
      return;
    }
    await this.connect().catch(() => {});
  }

  /**
   * Calls one tool; rejects with UpstreamUnreachable when the upstream could
   * not take the call, with CallRefused when the policy refused it. Every
   * gateway call that reaches an upstream passes here (a direct
   * `<group>__<tool>`, route_tool_call, broadcast_tool_call, call_tool), so
   * this is where a call of an external upstream is judged and audited, once,
   * as `<upstream>.<tool>` (a rule on its group matches too) with the
   * arguments it gets. A built-in server's own guard judges calls to it, as
   * the caller the link carries.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    await this.#ready();
    if (!this.#client || this.state !== "healthy") {
      throw new UpstreamUnreachable(this.lastError ?? `not connected`);
    }
    const guard = this.#options.guard;
    if (!guard || this.target.kind === "builtin") {
      return await this.#send(tool, args, call);
    }
    let ran = false;
    const result = await guard.run(
      {
        server: this.name,
        ...(this.group === this.name ? {} : { group: this.group }),
        tool,
        args,
        caller: call.caller,
        argNames: Object.keys(
          this.#listed(tool)?.inputSchema.properties ?? {},
        ),
      },
      call,
      () => {
        ran = true;
        return this.#send(tool, args, call);
      },
      call.connection,
    );
    if (!ran) throw new CallRefused(result);
    return result;
  }

  async #send(
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    // Read again: an approval can take minutes, and the upstream may have gone.
    const client = this.#client;
    if (!client || this.state !== "healthy") {
      throw new UpstreamUnreachable(this.lastError ?? `not connected`);
    }
    const target = this.target;
    this.inFlight++;
    const started = performance.now();
    let ok = false;
    try {
      // Built-in servers keep per-session state (a browser tab) per outer session.
      const session = call.sessionId && forwardedSession(call.sessionId);
      // The upstream gets a progress token of the gateway's own (tokens are
      // per connection); its reports go to this caller, under the caller's
      // token when it gave one, in order, and all before the result: a
      // report that came just before the answer (one read from a stdio
      // child) must not be sent after it, where the caller drops it.
      let relayed = Promise.resolve();
      const relay = (progress: number, total?: number, message?: string) => {
        relayed = relayed.then(() => call.progress(progress, total, message))
          .catch(() => {});
      };
      const result = target.kind === "builtin"
        ? await linkedSession.run(
          session || undefined,
          () =>
            this.#linkFor(target.peer, call.caller).callTool(tool, args, {
              signal: call.signal,
              timeoutMs: this.#options.callTimeoutMs,
              resetTimeoutOnProgress: true,
              onProgressReport: relay,
              // A built-in server's questions (a key in the daemon's page) reach this caller's client.
              elicit: call.elicit,
              elicitationComplete: call.elicitationComplete,
            }),
        )
        : target.kind === "http" && target.passThroughAuth
        ? await passThrough.run(
          call.authorization,
          () => this.#sendOn(client, tool, args, call, relay),
        )
        : await this.#sendOn(client, tool, args, call, relay);
      await relayed;
      // The SDK client (or, for a built-in server, the kit's dispatch) gave a CallToolResult.
      const parsed = isCallToolResult(result)
        ? result
        : CallToolResultSchema.parse(result);
      ok = parsed.isError !== true;
      return parsed;
    } catch (error) {
      // The upstream answered, or the caller gave up (cancelled, broadcast
      // timeout): either way the upstream is not down.
      if (error instanceof McpError) throw this.#late(error);
      if (call.signal.aborted) throw error;
      const message = describeFailure(error);
      this.lastCheck = this.#clock();
      this.#setState("unhealthy", message);
      throw new UpstreamUnreachable(message);
    } finally {
      this.inFlight--;
      this.calls++;
      if (!ok) this.errors++;
      this.latency.observe(performance.now() - started);
    }
  }

  /**
   * An external upstream's call: straight on its transport (direct_calls.ts)
   * where the gateway's own transport carries it, through the SDK Client
   * for a tool that must run as a task (the Client refuses it, as before).
   */
  #sendOn(
    client: Client,
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
    relay: (progress: number, total?: number, message?: string) => void,
  ): Promise<CallToolResult | { toolResult: unknown }> {
    const listed = this.#listed(tool);
    const transport = client.transport;
    if (
      listed?.execution?.taskSupport !== "required" &&
      (transport instanceof HttpClientTransport ||
        transport instanceof StdioUpstreamTransport)
    ) {
      return DirectCalls.of(transport).call(listed, tool, args, {
        timeoutMs: this.#options.callTimeoutMs,
        maxTotalMs: this.#options.callMaxMs,
        signal: call.signal,
        onprogress: relay,
      });
    }
    return client.callTool(
      { name: tool, arguments: args },
      CallToolResultSchema,
      {
        timeout: this.#options.callTimeoutMs,
        signal: call.signal,
        resetTimeoutOnProgress: true,
        // Progress resets the timeout: without a cap an upstream could hold the call forever.
        maxTotalTimeout: this.#options.callMaxMs,
        onprogress: (progress) =>
          relay(progress.progress, progress.total, progress.message),
      },
    );
  }

  /**
   * The SDK's own call timeouts, said with the deadline and its setting (still
   * an McpError: the upstream had the call, so it is never sent elsewhere).
   */
  #late(error: McpError): McpError {
    if (error.code !== ErrorCode.RequestTimeout) return error;
    const data = error.data;
    const has = (key: string) =>
      typeof data === "object" && data !== null && key in data;
    if (has("maxTotalTimeout")) {
      return new McpError(
        ErrorCode.RequestTimeout,
        `still running after ${
          duration(this.#options.callMaxMs)
        } (call_max_ms), so it was cancelled`,
      );
    }
    if (has("timeout")) {
      return new McpError(
        ErrorCode.RequestTimeout,
        `no answer to tools/call within ${
          duration(this.#options.callTimeoutMs)
        } (call_timeout_ms)`,
      );
    }
    return error;
  }

  /** The link calls of `caller` take: memory's own-namespace rule holds through the gateway. */
  #linkFor(peer: Peer, caller: Caller): DirectLink {
    // "" is the anonymous caller (no agent name is empty).
    const key = caller.agent ?? "";
    let link = this.#links.get(key);
    if (link === undefined) {
      link = peer.link(
        caller.agent === undefined ? {} : { agent: caller.agent },
      );
      this.#links.set(key, link);
    }
    return link;
  }

  #setState(state: UpstreamState, error?: string): void {
    const previous = this.state;
    if (error !== undefined) this.lastError = error;
    if (state === "healthy") this.lastError = undefined;
    if (previous !== state) this.since = this.#clock();
    this.state = state;
    this.#options.onChange(this, previous);
  }

  async #dropClient(): Promise<void> {
    this.#generation++;
    const client = this.#client;
    this.#client = undefined;
    // A new connection starts new links, as new clients did ("approve for the session").
    this.#links.clear();
    const agentClients = [...this.#agentClients.values()];
    this.#agentClients.clear();
    await Promise.all(
      agentClients.map((opened) =>
        opened.then((own) => own.close()).catch(() => {})
      ),
    );
    await client?.close().catch(() => {});
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#generation++;
    clearTimeout(this.#restartTimer);
    this.#restartTimer = undefined;
    await this.#connecting?.catch(() => {});
    await this.#dropClient();
    this.#pid = null;
    this.#setState("stopped");
  }
}

/** Every page of a paginated MCP list. */
async function paged<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  // A cap: an upstream that hands back cursors forever does not hold the gateway.
  for (let pages = 0; pages < 100; pages++) {
    const { items, next } = await page(cursor);
    all.push(...items);
    if (next === undefined) break;
    cursor = next;
  }
  return all;
}

/** Code-unit order: the same on every machine, unlike localeCompare. */
export function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Narrows what `Client.callTool` returns (it also types the legacy `toolResult` shape). */
function isCallToolResult(
  result: CallToolResult | { toolResult: unknown },
): result is CallToolResult {
  return Array.isArray(Reflect.get(result, "content"));
}
