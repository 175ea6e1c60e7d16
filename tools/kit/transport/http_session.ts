// The server transport of one streamable HTTP session (Mcp-Session-Id): the
// SDK's WebStandardStreamableHTTPServerTransport's behaviour (its status codes
// and messages), with one difference: a POST carrying requests is answered
// with one application/json body unless its calls send something before
// their responses (progress, log, sampling, elicitation) or release their
// stream: then, at that first message, the answer becomes an SSE stream.
// The spec lets the server pick either; a JSON body costs both sides a stream,
// an event store entry and SSE framing less. Envelopes are checked by shape
// (the SDK's guard only for a `_meta`), refusing every message the SDK's
// Protocol would drop unanswered; it validates the rest on arrival. Every
// request's wait ends: answered, cancelled, abandoned by its client, or with
// its session; and only its own call answers it (http_requests.ts).

import type {
  EventStore,
  JSONRPCMessage,
  RequestId,
  Transport,
} from "../../../platform/mcp_sdk.ts";
import type { Logger } from "../../../platform/log.ts";
import { asError } from "../../../platform/errors.ts";
import {
  cancelledId,
  isInitialize,
  isRequest,
  jsonAnswer,
  type MessageExtra,
  requestInfoOf,
  rpcError,
  wantsProgress,
} from "./http_wire.ts";
import { readMessages, sessionRefusal } from "./http_checks.ts";
import { MAX_ID_LENGTH, SessionRequests } from "./http_requests.ts";
import {
  type Exchange,
  RESUMABLE_FROM,
  SessionStreams,
  STANDALONE,
} from "./http_streams.ts";

type SendOptions = Parameters<Transport["send"]>[1];
type AuthInfo = MessageExtra["authInfo"];

export interface SessionTransportOptions {
  eventStore: EventStore;
  /** Sent with each priming event: how soon a client should reconnect. */
  retryInterval?: number;
  /** SSE comment lines this often keep idle streams open; 0 sends none. */
  keepAliveMs?: number;
  /** A POST not answered by then gets its SSE stream (headers, a resumable event id). */
  streamAfterMs?: number;
  /** Where a failing event store and dropped late messages are reported. */
  log?: Logger;
  onsessioninitialized(id: string): void;
  onsessionclosed(id: string): void;
}

/** The version the SDK assumes when a request has no MCP-Protocol-Version header. */
const DEFAULT_VERSION = "2025-03-26";
/** Calls answered sooner get one JSON body (most tool calls take milliseconds). */
const STREAM_AFTER_MS = 1000;

export class SessionHttpTransport implements Transport {
  sessionId?: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  /** A response was handed to its POST (or dropped with its session). */
  onanswered?: (id: RequestId) => void;

  readonly #options: SessionTransportOptions;
  readonly #exchanges = new Map<RequestId, Exchange>();
  readonly #streams: SessionStreams;
  readonly #requests = new SessionRequests();
  #initialized = false;
  #closed = false;

  constructor(options: SessionTransportOptions) {
    this.#options = options;
    this.#streams = new SessionStreams({
      eventStore: options.eventStore,
      retryInterval: options.retryInterval,
      keepAliveMs: options.keepAliveMs,
      streamAfterMs: options.streamAfterMs ?? STREAM_AFTER_MS,
      sessionId: () => this.sessionId,
      closed: () => this.#closed,
      refuse: (status, code, message) => this.#refuse(status, code, message),
      onerror: (error) => this.onerror?.(error),
    });
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  async handleRequest(
    request: Request,
    options: { parsedBody?: unknown; authInfo?: AuthInfo } = {},
  ): Promise<Response> {
    if (this.#closed) return rpcError(404, -32001, "Session not found");
    switch (request.method) {
      case "POST":
        return await this.#post(request, options);
      case "GET":
        return await this.#get(request);
      case "DELETE": {
        const refused = this.#checkSession(request);
        if (refused) return refused;
        try {
          if (this.sessionId) this.#options.onsessionclosed(this.sessionId);
          return new Response(null, { status: 200 });
        } finally {
          await this.close();
        }
      }
      default:
        return rpcError(405, -32000, "Method not allowed.", {
          Allow: "GET, POST, DELETE",
        });
    }
  }

  async #post(
    request: Request,
    options: { parsedBody?: unknown; authInfo?: AuthInfo },
  ): Promise<Response> {
    const messages = await readMessages(request, options.parsedBody);
    if (!Array.isArray(messages)) {
      return this.#refuse(messages.status, messages.code, messages.message);
    }
    const ids = messages.filter(isRequest).map((message) => message.id);
    // Every id a session holds stays small (a stored id may be a megabyte);
    // checked first, so a refused initialize opens no session.
    if (
      ids.some((id) => typeof id === "string" && id.length > MAX_ID_LENGTH)
    ) {
      return this.#refuse(
        400,
        -32600,
        `Invalid Request: a request ID is longer than ${MAX_ID_LENGTH} characters`,
      );
    }
    const init = messages.find(isInitialize);
    if (init) {
      if (this.#initialized) {
        return this.#refuse(
          400,
          -32600,
          "Invalid Request: Server already initialized",
        );
      }
      if (messages.length > 1) {
        return this.#refuse(
          400,
          -32600,
          "Invalid Request: Only one initialization request is allowed",
        );
      }
      this.sessionId = crypto.randomUUID();
      this.#initialized = true;
      this.#options.onsessioninitialized(this.sessionId);
    } else {
      const refused = this.#checkSession(request);
      if (refused) return refused;
    }
    if (this.#closed) return rpcError(404, -32001, "Session not found");
    const requestInfo = requestInfoOf(request);
    if (ids.length === 0) {
      for (const message of messages) {
        this.#deliver(message, { authInfo: options.authInfo, requestInfo });
      }
      return new Response(null, { status: 202 });
    }
    // An id must not be reused in a session (MCP spec): a second request with
    // an open one's id would take its answer, and the first would wait forever.
    if (
      (ids.length > 1 && new Set(ids).size < ids.length) ||
      ids.some((id) => this.#requests.isOpen(id))
    ) {
      return this.#refuse(
        400,
        -32600,
        "Invalid Request: a request ID is used twice (in this batch or by a request still open)",
      );
    }
    const version = init
      ? String(init.params?.protocolVersion)
      : request.headers.get("mcp-protocol-version") ?? DEFAULT_VERSION;
    // Each request gets its own server id (see http_requests.ts).
    const delivered = messages.map((message) =>
      isRequest(message)
        ? this.#requests.toServer(message, this.#requests.accept(message.id))
        : message
    );
    const serverIds = delivered.filter(isRequest).map((message) => message.id);
    const exchange: Exchange = {
      streamId: this.#streams.nextStreamId(),
      ids: serverIds,
      answers: new Map(),
      version,
      tail: Promise.resolve(),
    };
    for (const id of serverIds) this.#exchanges.set(id, exchange);
    const resumable = version >= RESUMABLE_FROM;
    const extra = (message: JSONRPCMessage): MessageExtra =>
      resumable && "id" in message && "method" in message
        ? {
          authInfo: options.authInfo,
          requestInfo,
          closeSSEStream: () => this.#release(message.id),
          closeStandaloneSSEStream: () => this.#streams.close(STANDALONE),
        }
        : { authInfo: options.authInfo, requestInfo };
    // A client asking for progress gets its stream at once, as it expects.
    if (messages.some(wantsProgress)) {
      this.#watch(request, exchange);
      const response = this.#streams.open(exchange.streamId);
      try {
        await this.#streams.prime(exchange);
      } catch (error) {
        this.#broken(exchange, error);
        for (const id of serverIds) {
          this.#exchanges.delete(id);
          this.#requests.close(id);
        }
        return rpcError(500, -32603, "Internal error: storing an event failed");
      }
      for (const message of delivered) this.#deliver(message, extra(message));
      return response;
    }
    const { promise, resolve } = Promise.withResolvers<Response>();
    exchange.pending = resolve;
    // A long call streams: its client gets headers and an event id to resume from.
    this.#streams.watchSlow(exchange, () => {
      // The client left before: nothing to stream (the signal is read only
      // here, not on every quick call).
      if (request.signal.aborted) return this.#abandoned(exchange);
      this.#watch(request, exchange);
      exchange.tail = exchange.tail.then(() => this.#streams.toStream(exchange))
        .catch(
          (error) => this.#broken(exchange, error),
        );
    });
    for (const message of delivered) this.#deliver(message, extra(message));
    return await promise;
  }

  /** Hands a message to the server; a cancellation also ends its request's wait. */
  #deliver(message: JSONRPCMessage, extra: MessageExtra): void {
    // A cancellation names the client's id; the server knows the request by its own.
    const named = cancelledId(message);
    const id = named === undefined ? undefined : this.#requests.serverId(named);
    if (named !== undefined && id === undefined) {
      // Not open: an id of the server's making is no client's to cancel.
      if (this.#requests.isRenamed(named)) return;
      // The latest call its client left by that id may still run: now it is cancelled.
      const gone = this.#requests.cancelGone(named);
      if (gone !== undefined) {
        this.onmessage?.(this.#requests.cancelling(message, gone), extra);
        return;
      }
    }
    this.onmessage?.(
      id === undefined ? message : this.#requests.toServer(message, id),
      extra,
    );
    // The SDK sends no response to a cancelled request (as the spec says).
    const exchange = id === undefined ? undefined : this.#exchanges.get(id);
    if (id === undefined || !exchange) return;
    this.#requests.cancel(id);
    this.#answered(exchange, id, undefined);
  }

  /** A client gone before its answers frees the session of them. */
  #watch(request: Request, exchange: Exchange): void {
    request.signal.addEventListener("abort", () => this.#abandoned(exchange), {
      once: true,
    });
  }

  /**
   * The POST's client went away: requests it can not resume (a JSON wait, a
   * stream without event ids) are answered with nothing. A resumable stream
   * stays: its client may come back with Last-Event-ID.
   */
  #abandoned(exchange: Exchange): void {
    if (!exchange.pending && this.#streams.isResumable(exchange.streamId)) {
      return;
    }
    for (const id of exchange.ids) {
      if (exchange.answers.has(id) || this.#exchanges.get(id) !== exchange) {
        continue;
      }
      this.#requests.abandon(id);
      this.#answered(exchange, id, undefined);
    }
  }

  /** The event store failed: this stream ends; its requests end as they answer. Logged here only. */
  #broken(exchange: Exchange, error: unknown): void {
    this.#options.log?.warn("mcp_event_store_failed", {
      session: this.sessionId,
      error: asError(error).message,
    });
    this.#streams.close(exchange.streamId);
  }

  async #get(request: Request): Promise<Response> {
    if (!request.headers.get("accept")?.includes("text/event-stream")) {
      return this.#refuse(
        406,
        -32000,
        "Not Acceptable: Client must accept text/event-stream",
      );
    }
    const refused = this.#checkSession(request);
    if (refused) return refused;
    const lastEventId = request.headers.get("last-event-id");
    if (lastEventId) return await this.#streams.replay(lastEventId);
    if (this.#streams.has(STANDALONE)) {
      return this.#refuse(
        409,
        -32000,
        "Conflict: Only one SSE stream is allowed per session",
      );
    }
    return this.#streams.open(STANDALONE);
  }

  /** The tool released its stream: the client resumes it with Last-Event-ID. */
  #release(id: RequestId): void {
    const exchange = this.#exchanges.get(id);
    if (!exchange) return;
    exchange.tail = exchange.tail.then(async () => {
      await this.#streams.toStream(exchange);
      this.#streams.close(exchange.streamId);
    }).catch((error) => this.#broken(exchange, error));
  }

  async send(message: JSONRPCMessage, options?: SendOptions): Promise<void> {
    // A call that ends after its session has nowhere to answer (as the SDK's transport).
    if (this.#closed) return;
    const answer = "result" in message || "error" in message;
    const id = answer && "id" in message
      ? message.id
      : options?.relatedRequestId;
    if (id === undefined) {
      if (answer) {
        throw new Error(
          "Cannot send a response on a standalone SSE stream unless resuming a previous client request",
        );
      }
      return await this.#streams.write(STANDALONE, message);
    }
    const exchange = this.#exchanges.get(id);
    if (!exchange) {
      if (this.#requests.isGone(id, answer)) {
        // A late message of a request its client cancelled or left.
        this.#options.log?.debug("mcp_late_message_dropped", {
          session: this.sessionId,
          kind: answer ? "response" : "message",
        });
        return;
      }
      throw new Error(
        `No connection established for request ID: ${String(id)}`,
      );
    }
    // A response goes out with the id its client gave the request.
    const outgoing = answer ? this.#requests.toClient(message) : message;
    const written = exchange.tail.then(async () => {
      // Cancelled or abandoned while this waited its turn.
      if (exchange.answers.has(id)) return;
      try {
        if (!answer || !exchange.pending) {
          await this.#streams.toStream(exchange);
          await this.#streams.write(exchange.streamId, outgoing);
        }
      } finally {
        // Answered even if its event could not be stored: the wait ends.
        if (answer) this.#answered(exchange, id, outgoing);
      }
    });
    exchange.tail = written.catch(() => {});
    await written;
  }

  /** `message` undefined: the request was cancelled or abandoned, no response goes out. */
  #answered(
    exchange: Exchange,
    id: RequestId,
    message: JSONRPCMessage | undefined,
  ): void {
    if (exchange.answers.has(id)) return;
    exchange.answers.set(id, message);
    try {
      if (exchange.answers.size < exchange.ids.length) return;
      for (const each of exchange.ids) {
        if (this.#exchanges.get(each) === exchange) {
          this.#exchanges.delete(each);
          this.#requests.close(each);
        }
      }
      const pending = exchange.pending;
      if (pending) {
        exchange.pending = undefined;
        this.#streams.unwatchSlow(exchange);
        const answers = exchange.ids.flatMap((each) =>
          exchange.answers.get(each) ?? []
        );
        pending(jsonAnswer(answers, this.sessionId));
        return;
      }
      const open = this.#streams.has(exchange.streamId);
      const resumable = this.#streams.settle(exchange.streamId);
      if (open) this.#streams.close(exchange.streamId);
      else if (!this.#closed && !resumable && message) {
        throw new Error(
          `No connection established for request ID: ${String(id)}`,
        );
      }
    } finally {
      this.onanswered?.(id);
    }
  }

  #checkSession(request: Request): Response | undefined {
    const refusal = sessionRefusal(request, this.#initialized, this.sessionId);
    return refusal &&
      this.#refuse(refusal.status, refusal.code, refusal.message);
  }

  #refuse(status: number, code: number, message: string): Response {
    this.onerror?.(new Error(message));
    return rpcError(status, code, message);
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#streams.closeAll();
    // Calls still running have no one to answer: their POSTs end now.
    for (const exchange of new Set(this.#exchanges.values())) {
      exchange.pending?.(rpcError(404, -32001, "Session not found"));
      exchange.pending = undefined;
    }
    this.#exchanges.clear();
    this.#requests.clear();
    this.onclose?.();
    return Promise.resolve();
  }
}
