// Streamable HTTP for one server: sessions for clients that initialize
// (Mcp-Session-Id, SSE, resumable streams, DELETE), and stateless handling
// of session-less POSTs. Per-process state: route a session's requests to
// the daemon that created it.

import {
  isInitializeRequest,
  isJSONRPCRequest,
  JSONRPCMessageSchema,
} from "../../../platform/mcp_sdk_types.ts";
import type { RequestId } from "../../../platform/mcp_sdk.ts";
import type { Server } from "../../../platform/mcp_sdk_server.ts";
import { lazy } from "../../../platform/lazy.ts";
import { InFlight } from "../../../platform/lifecycle.ts";
import type { Logger } from "../../../platform/log.ts";
import { MemoryEventStore } from "./event_store.ts";
import type { HostedServer } from "../host.ts";
/**
 * The SDK server side (sdk_server.ts: the SDK's Server, ajv) and its HTTP
 * transport (content-type, CommonJS: Node compatibility), loaded on the
 * first request that needs them: not in an idle daemon.
 */
function sdkServer(): Promise<typeof import("./sdk_server.ts")> {
  // Imported once: a dynamic import() resolves its URL again on every call.
  return sdkServerModule ??= lazy<typeof import("./sdk_server.ts")>(
    "./sdk_server.ts",
    import.meta.url,
  );
}
let sdkServerModule: Promise<typeof import("./sdk_server.ts")> | undefined;
import type { SessionPreferences } from "../mod.ts";
import { authInfoFor, type RequestAuth } from "./identity.ts";
import { SessionHttpTransport } from "./http_session.ts";
import { watchEnd } from "./http_streams.ts";
import { MAX_BATCH } from "./http_checks.ts";
import { rpcError, withoutPayload } from "./http_wire.ts";

export interface HttpEndpointOptions {
  log: Logger;
  /** A session without requests or open streams for this long is closed. */
  idleTimeoutMs: number;
  /** Open sessions past this evict the least recently used idle one. */
  maxSessions?: number;
  /** The same cap for the sessions of one identified agent. */
  maxSessionsPerAgent?: number;
  clock?: () => number;
}

/** Defaults chosen on measurement: see "Session cost" in README.md. */
export const SESSION_DEFAULTS = {
  maxSessions: 1000,
  maxSessionsPerAgent: 100,
  idleTimeoutMs: 300_000,
};

interface Session {
  id: string;
  /** The identity that opened the session; every later request must be the same. */
  agent: string | undefined;
  transport: SessionHttpTransport;
  server: Server;
  lastSeen: number;
  /** When it was initialized: a newcomer not used yet is protected for a while. */
  opened: number;
  /** A request after `initialize` arrived; until then it is not evicted (see NEWCOMER_MS). */
  used: boolean;
  /** Open GET streams (the standing notification channel, resumed streams). */
  openStreams: number;
  /** Requests received and not yet answered, each ending its shutdown count. */
  answering: Map<RequestId, () => void>;
}

export { MemoryEventStore };

/**
 * How long a session not used since `initialize` is kept from eviction: a
 * client connects, opens its GET stream and makes its first call within
 * this even on a loaded machine (seconds at most), so no newcomer gets 404
 * right after `initialize`. Bounded, so a client that initializes and never
 * calls holds its place no longer than this.
 */
export const NEWCOMER_MS = 10_000;
/**
 * Retry-After (seconds) of a 503 for a full server: a newcomer is usually
 * used within milliseconds and a busy session frees when its call ends or
 * its client leaves, so a retry soon is likely to find room.
 */
const RETRY_AFTER_S = "1";

const NO_AUTH: RequestAuth = { caller: {} };

export class McpHttpEndpoint {
  readonly host: HostedServer;
  readonly #sessions = new Map<string, Session>();
  readonly #log: Logger;
  readonly #idleTimeoutMs: number;
  readonly #maxSessions: number;
  readonly #maxPerAgent: number;
  /** Open sessions per identified agent, for the per-agent cap. */
  readonly #perAgent = new Map<string, number>();
  #evicted = 0;
  #timedOut = 0;
  readonly #clock: () => number;
  /** Open POST streams: responses still being written. Shutdown waits for them. */
  readonly #responding = new InFlight();
  #accepting = true;
  #sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(host: HostedServer, options: HttpEndpointOptions) {
    this.host = host;
    this.#log = options.log.child({ server: host.id, transport: "http" });
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#maxSessions = options.maxSessions ?? SESSION_DEFAULTS.maxSessions;
    this.#maxPerAgent = options.maxSessionsPerAgent ??
      SESSION_DEFAULTS.maxSessionsPerAgent;
    this.#clock = options.clock ?? Date.now;
    host.gauges.set("sessions", () => this.#sessions.size);
    host.gauges.set("sessions_evicted", () => this.#evicted);
    host.gauges.set("sessions_timed_out", () => this.#timedOut);
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  async handle(
    request: Request,
    auth: RequestAuth = NO_AUTH,
  ): Promise<Response> {
    const authInfo = authInfoFor(auth.caller, auth.authorization);
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId !== null) {
      const session = this.#sessions.get(sessionId);
      if (!session) {
        return rpcError(
          404,
          -32001,
          `Session not found: ${sessionId}. Initialize a new session.`,
        );
      }
      if (session.agent !== auth.caller.agent) {
        return rpcError(
          403,
          -32000,
          "This session was opened by another identity; open your own session",
        );
      }
      this.#touch(session);
      const response = await session.transport.handleRequest(request, {
        authInfo,
      });
      return request.method === "GET"
        ? this.#trackStream(session, response, request.signal)
        : response;
    }
    if (request.method !== "POST") {
      return rpcError(
        405,
        -32000,
        `${request.method} needs an Mcp-Session-Id header; without a session only POST is served`,
        { Allow: "POST" },
      );
    }
    // A server `serve` defers loads on its first session (or stateless call).
    await this.host.load();
    if (this.host.phase.phase !== "running") {
      const state = this.host.phase.state;
      return rpcError(
        503,
        -32000,
        `Server "${this.host.id}" is not available (phase ${state.phase}` +
          (state.error ? `: ${state.error}` : "") + ")",
      );
    }
    const preferences = preferencesOf(request);
    if (typeof preferences === "string") {
      return rpcError(400, -32602, preferences);
    }
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return rpcError(
        400,
        -32700,
        "Parse error: the request body is not valid JSON",
      );
    }
    if (isInitializeRequest(body)) {
      return await this.#openSession(request, body, auth, preferences);
    }
    return await this.#stateless(request, body, authInfo, preferences);
  }

  async #openSession(
    request: Request,
    body: unknown,
    auth: RequestAuth,
    preferences: SessionPreferences,
  ): Promise<Response> {
    const authInfo = authInfoFor(auth.caller, auth.authorization);
    if (!this.#accepting) {
      return rpcError(503, -32000, "Shutting down: not accepting new sessions");
    }
    const agent = auth.caller.agent;
    if (
      agent !== undefined &&
      (this.#perAgent.get(agent) ?? 0) >= this.#maxPerAgent &&
      !this.#evictIdle((session) => session.agent === agent)
    ) {
      return rpcError(
        503,
        -32000,
        `Too many open sessions for agent "${agent}" (${this.#maxPerAgent}), all busy or just opened; try later`,
        { "Retry-After": RETRY_AFTER_S },
      );
    }
    if (this.#sessions.size >= this.#maxSessions && !this.#evictIdle()) {
      return rpcError(
        503,
        -32000,
        `Too many open sessions (${this.#maxSessions}), all busy or just opened; try later`,
        { "Retry-After": RETRY_AFTER_S },
      );
    }
    // The preferences stick to the session: later requests carry only its id.
    const server = (await sdkServer()).createSdkServer(
      this.host,
      preferences,
      auth.caller,
    );
    let session: Session | undefined;
    const transport = new SessionHttpTransport({
      eventStore: new MemoryEventStore(),
      retryInterval: 1000,
      log: this.#log,
      onsessioninitialized: (id) => {
        session = {
          id,
          agent: auth.caller.agent,
          transport,
          server,
          lastSeen: this.#clock(),
          opened: this.#clock(),
          used: false,
          openStreams: 0,
          answering: new Map(),
        };
        this.#sessions.set(id, session);
        if (session.agent !== undefined) {
          this.#perAgent.set(
            session.agent,
            (this.#perAgent.get(session.agent) ?? 0) + 1,
          );
        }
        this.#log.info("session_opened", {
          session: id,
          sessions: this.#sessions.size,
        });
        this.#startSweeper();
      },
      onsessionclosed: (id) => this.#forget(id, "deleted"),
    });
    transport.onclose = () => {
      if (session) this.#forget(session.id, "closed");
    };
    // What the SDK could not deliver or handle (and the transport's refusals) is reported only here.
    server.onerror = (error) =>
      this.#log.warn("mcp_session_error", {
        session: transport.sessionId,
        error: withoutPayload(error),
      });
    await (await sdkServer()).connectChecked(server, transport);
    this.#countRequests(transport, () => session);
    const response = await transport.handleRequest(request, {
      parsedBody: body,
      authInfo,
    });
    if (!session) {
      // Initialization failed; nothing refers to this server any more.
      await server.close();
    }
    return response;
  }

  /**
   * Counts each request of a session from its arrival to its response: a
   * session with a call running is not idle, and shutdown waits for the
   * responses. Cheaper than wrapping every POST's response stream to see it end.
   */
  #countRequests(
    transport: SessionHttpTransport,
    sessionOf: () => Session | undefined,
  ): void {
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const session = sessionOf();
      if (
        session && "method" in message && "id" in message &&
        !session.answering.has(message.id)
      ) {
        session.answering.set(message.id, this.#responding.begin());
        // Busy from now until answered: its protection as a newcomer ends.
        if (message.method !== "initialize") session.used = true;
      }
      deliver?.(message, extra);
    };
    transport.onanswered = (id) => {
      const session = sessionOf();
      const answered = session?.answering.get(id);
      if (!session || !answered) return;
      session.answering.delete(id);
      answered();
      if (this.#sessions.has(session.id)) this.#touch(session);
    };
  }

  async #stateless(
    request: Request,
    body: unknown,
    authInfo: ReturnType<typeof authInfoFor>,
    preferences: SessionPreferences,
  ): Promise<Response> {
    const [{ createSdkServer }, { WebStandardStreamableHTTPServerTransport }] =
      await Promise.all([
        sdkServer(),
        lazy<typeof import("../../../platform/mcp_sdk_http_server.ts")>(
          "../../../platform/mcp_sdk_http_server.ts",
          import.meta.url,
        ),
      ]);
    const server = createSdkServer(this.host, preferences);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    // What the SDK could not deliver or handle is reported only here (as in a session).
    server.onerror = (error) =>
      this.#log.warn("mcp_stateless_error", { error: withoutPayload(error) });
    await server.connect(transport);
    try {
      // With JSON responses the promise settles once every response is ready.
      return await transport.handleRequest(request, {
        parsedBody: withoutCancellations(body),
        authInfo,
      });
    } finally {
      await server.close();
    }
  }

  #forget(id: string, reason: string): void {
    const session = this.#sessions.get(id);
    if (!session) return;
    this.#sessions.delete(id);
    if (session.agent !== undefined) {
      const left = (this.#perAgent.get(session.agent) ?? 1) - 1;
      if (left > 0) this.#perAgent.set(session.agent, left);
      else this.#perAgent.delete(session.agent);
    }
    this.#log.info("session_closed", {
      session: id,
      reason,
      sessions: this.#sessions.size,
    });
    // Unanswered requests have nowhere to go now; shutdown must not wait for them.
    for (const answered of session.answering.values()) answered();
    session.answering.clear();
    session.server.close().catch(() => {});
    this.host.sessionClosed(id);
    if (this.#sessions.size === 0) this.#stopSweeper();
  }

  /** Marks a session used now: the map's order is least recently used first. */
  #touch(session: Session): void {
    session.lastSeen = this.#clock();
    this.#sessions.delete(session.id);
    this.#sessions.set(session.id, session);
  }

  /**
   * Closes the least recently used session with no call running and past
   * its newcomer's grace (among those `which` accepts), preferring one
   * without an open GET stream; false when there is none. An open stream is
   * no proof of a client: a client library may keep the connection after
   * its client has left (Deno's fetch did for a few of 30 GETs aborted at once), and
   * those sessions would fill the cap for good. An evicted client gets 404
   * on its next request and initializes again.
   */
  #evictIdle(which: (session: Session) => boolean = () => true): boolean {
    const now = this.#clock();
    const evictable = (session: Session) =>
      session.answering.size === 0 && !newcomer(session, now) &&
      which(session);
    const victim =
      this.#sessions.values().find((session) =>
        session.openStreams === 0 && evictable(session)
      ) ?? this.#sessions.values().find(evictable);
    if (!victim) return false;
    this.#evicted++;
    this.#close(victim, "evicted");
    return true;
  }

  #close(session: Session, reason: string): void {
    // Forget first, so the transport's onclose finds nothing left to do.
    this.#forget(session.id, reason);
    session.transport.close().catch(() => {});
  }

  /** Counts open GET streams so a session with a live stream is never idle. */
  #trackStream(
    session: Session,
    response: Response,
    signal: AbortSignal,
  ): Response {
    const tracked = watchEnd(response, signal, () => {
      session.openStreams--;
      // The idle timeout counts from here; its place in the eviction order
      // stays that of its last request: a client that left is not "recent".
      session.lastSeen = this.#clock();
    });
    if (tracked.open) session.openStreams++;
    return tracked.response;
  }

  #startSweeper(): void {
    if (this.#sweeper !== undefined) return;
    const every = Math.max(
      1000,
      Math.min(60_000, Math.floor(this.#idleTimeoutMs / 4)),
    );
    this.#sweeper = setInterval(() => this.sweep(), every);
  }

  #stopSweeper(): void {
    if (this.#sweeper === undefined) return;
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
  }

  /** Closes sessions idle for longer than the timeout. */
  sweep(): void {
    const now = this.#clock();
    for (const session of [...this.#sessions.values()]) {
      if (!busy(session) && now - session.lastSeen > this.#idleTimeoutMs) {
        this.#timedOut++;
        this.#close(session, "idle");
      }
    }
  }

  /** Stops new sessions; existing ones keep working so running calls can finish. */
  stopAccepting(): void {
    this.#accepting = false;
  }

  /** Waits (bounded) until every request received has its response in its stream. */
  async drain(timeoutMs: number): Promise<boolean> {
    return await this.#responding.idle(timeoutMs);
  }

  /** Ends every session and its streams. */
  async close(): Promise<void> {
    this.#accepting = false;
    this.#stopSweeper();
    const sessions = [...this.#sessions.values()];
    await Promise.all(
      sessions.map((session) => session.transport.close().catch(() => {})),
    );
    for (const session of sessions) this.#forget(session.id, "shutdown");
  }
}

/** A session with a request unanswered or a GET stream open is in use. */
function busy(session: Session): boolean {
  return session.openStreams > 0 || session.answering.size > 0;
}

/** Initialized, not used yet, and recent: its client is still connecting. */
function newcomer(session: Session, now: number): boolean {
  return !session.used && now - session.opened < NEWCOMER_MS;
}

/** `?tools=on_demand|all` or `X-Agentd-Tools:` on the request that opens a session; a string is the error. */
function preferencesOf(request: Request): SessionPreferences | string {
  const asked = new URL(request.url).searchParams.get("tools") ??
    request.headers.get("x-agentd-tools");
  if (asked === null) return {};
  if (asked === "on_demand" || asked === "all") return { tools: asked };
  return `tools: "${asked}" is not a tools mode; use on_demand or all (query ?tools= or header X-Agentd-Tools)`;
}

/**
 * A stateless POST's messages without the cancellations of its own requests:
 * a cancelled call is never answered, and the POST, waiting for every answer,
 * would never end. The spec lets a receiver ignore a cancellation; the call
 * answers as usual. Only a batch the SDK would take as it is loses them, so a
 * body it refuses is refused the same way.
 */
function withoutCancellations(body: unknown): unknown {
  // Most batches hold none: they are handed on without a second parse.
  if (!Array.isArray(body) || !body.some(isCancellation)) return body;
  if (
    body.length > MAX_BATCH ||
    !body.every((message) => JSONRPCMessageSchema.safeParse(message).success) ||
    body.some(isInitializeRequest) || !body.some(isJSONRPCRequest)
  ) {
    return body;
  }
  return body.filter((message) => !isCancellation(message));
}

function isCancellation(message: unknown): boolean {
  return typeof message === "object" && message !== null &&
    !("id" in message) && "method" in message &&
    message.method === "notifications/cancelled";
}
