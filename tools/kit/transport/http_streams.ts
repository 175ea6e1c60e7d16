// The SSE side of one streamable HTTP session (http_session.ts): its open
// streams, the event store behind them, priming events, resumption with
// Last-Event-ID, and the switch of a POST's JSON answer to a stream.

import type {
  EventStore,
  JSONRPCMessage,
  RequestId,
} from "../../../platform/mcp_sdk.ts";
import { asError } from "../../../platform/errors.ts";
import {
  encoder,
  openSse,
  rpcError,
  sseEvent,
  sseResponse,
  type SseStream,
} from "./http_wire.ts";

export const STANDALONE = "_GET_stream";
/** From this version on, a stream starts with a priming event and may be released. */
export const RESUMABLE_FROM = "2025-11-25";

/** The requests of one POST, and how their answer goes out. */
export interface Exchange {
  streamId: string;
  ids: RequestId[];
  /** Each request's response; undefined for one cancelled or abandoned (none will be sent). */
  answers: Map<RequestId, JSONRPCMessage | undefined>;
  /** Set while the answer is still to be chosen: resolves the POST's response. */
  pending?: (response: Response) => void;
  version: string;
  /** Writes to this exchange's stream in the order they were sent. */
  tail: Promise<void>;
  /** When (Date.now()) a pending answer turns into a stream. */
  due?: number;
}

/** What the streams need of their session. */
export interface StreamsSession {
  eventStore: EventStore;
  retryInterval?: number;
  keepAliveMs?: number;
  /** A POST not answered by then gets its SSE stream. */
  streamAfterMs: number;
  sessionId(): string | undefined;
  closed(): boolean;
  refuse(status: number, code: number, message: string): Response;
  onerror(error: Error): void;
}

/** The SSE streams of one session, by stream id. */
export class SessionStreams {
  readonly #session: StreamsSession;
  readonly #streams = new Map<string, SseStream>();
  readonly #resumable = new Set<string>();
  /** Pending answers in arrival order, so in order of `due`: what to do when late. */
  readonly #slow = new Map<Exchange, () => void>();
  /** One timer for the session's pending answers, not one per POST. */
  #slowTimer: ReturnType<typeof setTimeout> | undefined;
  /** Stream ids: unique across sessions, cheaper than a UUID per POST. */
  readonly #prefix = crypto.randomUUID();
  #opened = 0;

  constructor(session: StreamsSession) {
    this.#session = session;
  }

  /** A fresh stream id for a POST. */
  nextStreamId(): string {
    return `${this.#prefix}-${++this.#opened}`;
  }

  /** Runs `late` if `exchange` is still pending `streamAfterMs` from now. */
  watchSlow(exchange: Exchange, late: () => void): void {
    exchange.due = Date.now() + this.#session.streamAfterMs;
    this.#slow.set(exchange, late);
    this.#armSlow(this.#session.streamAfterMs);
  }

  /** The exchange's answer is chosen: nothing to turn into a stream. */
  unwatchSlow(exchange: Exchange): void {
    this.#slow.delete(exchange);
  }

  #armSlow(ms: number): void {
    if (this.#slowTimer !== undefined) return;
    this.#slowTimer = setTimeout(() => this.#lateAnswers(), ms);
    Deno.unrefTimer(this.#slowTimer);
  }

  #lateAnswers(): void {
    this.#slowTimer = undefined;
    const now = Date.now();
    for (const [exchange, late] of this.#slow) {
      const due = exchange.due ?? now;
      if (due > now) return this.#armSlow(due - now);
      this.#slow.delete(exchange);
      late();
    }
  }

  has(streamId: string): boolean {
    return this.#streams.has(streamId);
  }

  /** Closes the stream `streamId` if it is open. */
  close(streamId: string): void {
    this.#streams.get(streamId)?.close();
  }

  /** Forgets that `streamId` can be resumed; true if it could. */
  settle(streamId: string): boolean {
    return this.#resumable.delete(streamId);
  }

  isResumable(streamId: string): boolean {
    return this.#resumable.has(streamId);
  }

  async replay(lastEventId: string): Promise<Response> {
    const store = this.#session.eventStore;
    try {
      const streamId = await store.getStreamIdForEventId?.(lastEventId);
      if (!streamId) {
        return this.#session.refuse(400, -32000, "Invalid event ID format");
      }
      if (this.#streams.has(streamId)) {
        return this.#session.refuse(
          409,
          -32000,
          "Conflict: Stream already has an active connection",
        );
      }
      const replayed = new Set<string>();
      const chunks: Uint8Array[] = [];
      await store.replayEventsAfter(lastEventId, {
        send: (eventId, message) => {
          chunks.push(sseEvent(message, eventId));
          replayed.add(eventId);
          return Promise.resolve();
        },
      });
      if (this.#session.closed()) {
        return rpcError(404, -32001, "Session not found");
      }
      const response = this.open(streamId, replayed);
      for (const chunk of chunks) {
        this.#streams.get(streamId)?.controller.enqueue(chunk);
      }
      this.#resumable.add(streamId);
      return response;
    } catch (error) {
      this.#session.onerror(asError(error));
      return rpcError(500, -32000, "Error replaying events");
    }
  }

  /** Opens an SSE response for `streamId`, replacing any earlier one. */
  open(streamId: string, replayed?: Set<string>): Response {
    this.#streams.get(streamId)?.close();
    const { stream, body } = openSse(
      this.#session.keepAliveMs ?? 15_000,
      (ended) => {
        if (this.#streams.get(streamId) === ended) {
          this.#streams.delete(streamId);
        }
      },
      replayed,
    );
    this.#streams.set(streamId, stream);
    return sseResponse(body, this.#session.sessionId());
  }

  /** An event with an id and no data, so the client can resume the stream. */
  async prime(exchange: Exchange): Promise<void> {
    if (exchange.version < RESUMABLE_FROM) return;
    // What the event stands for has no message; the SDK stores `{}` here.
    const id = await this.#session.eventStore.storeEvent(exchange.streamId, {
      jsonrpc: "2.0",
      method: "",
    });
    const retry = this.#session.retryInterval;
    this.#streams.get(exchange.streamId)?.controller.enqueue(encoder.encode(
      `id: ${id}\n${retry === undefined ? "" : `retry: ${retry}\n`}data: \n\n`,
    ));
    this.#resumable.add(exchange.streamId);
  }

  /** The POST's answer becomes an SSE stream (a call sends more than its response). */
  async toStream(exchange: Exchange): Promise<void> {
    const pending = exchange.pending;
    if (!pending) return;
    exchange.pending = undefined;
    this.#slow.delete(exchange);
    pending(this.open(exchange.streamId));
    await this.prime(exchange);
    // Responses of the same batch that came before the switch.
    for (const answer of exchange.answers.values()) {
      if (answer) await this.write(exchange.streamId, answer);
    }
  }

  /** Stores an event (for resuming) and writes it to its stream if one is open. */
  async write(streamId: string, message: JSONRPCMessage): Promise<void> {
    const eventId = await this.#session.eventStore.storeEvent(
      streamId,
      message,
    );
    const stream = this.#streams.get(streamId);
    if (!stream || stream.replayed?.has(eventId)) return;
    try {
      stream.controller.enqueue(sseEvent(message, eventId));
      if (streamId !== STANDALONE) this.#resumable.add(streamId);
    } catch (error) {
      this.#session.onerror(asError(error));
    }
  }

  /** Ends every stream (the session closes). */
  closeAll(): void {
    clearTimeout(this.#slowTimer);
    this.#slowTimer = undefined;
    this.#slow.clear();
    for (const stream of [...this.#streams.values()]) stream.close();
    this.#streams.clear();
    this.#resumable.clear();
  }
}

/**
 * `response` as it is, or, for an SSE stream, with `ended` called once when
 * the stream ends: read to its end, cancelled, or its client gone. The
 * request's abort signal says the last at once (Deno cancels the body only
 * later); the stream is then cancelled, so its session's slot for it frees.
 */
export function watchEnd(
  response: Response,
  signal: AbortSignal,
  ended: () => void,
): { response: Response; open: boolean } {
  const body = response.body;
  if (
    !body ||
    !response.headers.get("content-type")?.startsWith("text/event-stream")
  ) {
    return { response, open: false };
  }
  if (signal.aborted) {
    body.cancel().catch(() => {});
    return { response, open: false };
  }
  let done = false;
  const reader = body.getReader();
  const left = () => {
    end();
    reader.cancel(signal.reason).catch(() => {});
  };
  const end = () => {
    if (done) return;
    done = true;
    signal.removeEventListener("abort", left);
    ended();
  };
  signal.addEventListener("abort", left, { once: true });
  const tracked = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        // Also a close after its client left: error() on a closed stream is a no-op.
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return {
    response: new Response(tracked, {
      status: response.status,
      headers: response.headers,
    }),
    open: true,
  };
}
