// The gateway's client side of MCP streamable HTTP, lean: one POST per message,
// a JSON answer parsed whole and an SSE answer parsed straight off the byte
// stream. The SDK's StreamableHTTPClientTransport pipes every answer through a
// TextDecoderStream and an EventSourceParserStream and checks each message
// with zod; the Client checks every result against its schema anyway, and the
// pipes were the largest JavaScript cost of a routed call (bench/README.md,
// Gateway). No OAuth (the gateway sends configured or passed-through headers),
// no resumption of a POST's stream; the standalone GET stream is kept.

import { asError } from "../../../platform/errors.ts";
import type { JSONRPCMessage, Transport } from "../../../platform/mcp_sdk.ts";
import { SseParser } from "../../../platform/sse.ts";
import { looksLikeMessage } from "./jsonrpc_envelope.ts";

export interface HttpTransportOptions {
  /** Sent with every request (names in any case). */
  headers: Readonly<Record<string, string>>;
  /** The Authorization header for this request, read when it is sent (pass-through). */
  authorization?: () => string | undefined;
}

const STATUS_REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
// What the SDK does for its standalone GET stream: 1 s, then ×1.5, twice.
const RECONNECT_DELAYS_MS = [1000, 1500];

/** An error status from the upstream, worded as the SDK's transport words it. */
export class UpstreamHttpError extends Error {
  constructor(readonly code: number, message: string) {
    super(`Streamable HTTP error: ${message}`);
  }
}

export class HttpClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  sessionId?: string;

  readonly #url: URL;
  readonly #headers: Record<string, string>;
  readonly #authorization?: () => string | undefined;
  #protocolVersion?: string;
  #abort?: AbortController;
  #reconnect?: ReturnType<typeof setTimeout>;
  #closed = false;

  constructor(url: URL, options: HttpTransportOptions) {
    this.#url = url;
    this.#headers = {};
    for (const [name, value] of Object.entries(options.headers)) {
      this.#headers[name.toLowerCase()] = value;
    }
    this.#authorization = options.authorization;
  }

  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  start(): Promise<void> {
    if (this.#abort) {
      return Promise.reject(new Error("HttpClientTransport already started"));
    }
    this.#abort = new AbortController();
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    clearTimeout(this.#reconnect);
    this.#abort?.abort();
    this.onclose?.();
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    try {
      await this.#post(message);
    } catch (error) {
      const failure = asError(error);
      this.onerror?.(failure);
      throw failure;
    }
  }

  async #post(message: JSONRPCMessage): Promise<void> {
    const headers = this.#common();
    headers["content-type"] = "application/json";
    headers["accept"] = "application/json, text/event-stream";
    const response = await this.#fetch({
      method: "POST",
      headers,
      body: JSON.stringify(message),
      signal: this.#abort?.signal,
    });
    const sessionId = response.headers.get("mcp-session-id");
    if (sessionId) this.sessionId = sessionId;
    if (!response.ok) {
      const text = await response.text().catch(() => "");
      throw new UpstreamHttpError(
        response.status,
        `Error POSTing to endpoint: ${
          unfollowed(response, this.#url) ??
            `HTTP ${response.status} ${response.statusText}${rpcErrorOf(text)}`
              .trim()
        }`,
      );
    }
    if (response.status === 202) {
      await response.body?.cancel();
      if (
        "method" in message && message.method === "notifications/initialized"
      ) {
        this.#listen(0, undefined, false);
      }
      return;
    }
    if (!("method" in message && "id" in message)) {
      // Only a request is answered; release the connection.
      await response.body?.cancel();
      return;
    }
    const type = mediaType(response.headers.get("content-type"));
    if (type === "text/event-stream" && response.body) {
      // Read on, as the SDK does: send() settles when the answer starts.
      this.#read(response.body, undefined).catch(() => {});
    } else if (type === "application/json") {
      const data: unknown = await response.json();
      for (const item of Array.isArray(data) ? data : [data]) {
        this.#deliver(item);
      }
    } else {
      await response.body?.cancel();
      throw new UpstreamHttpError(
        -1,
        `Unexpected content type: ${response.headers.get("content-type")}`,
      );
    }
  }

  /** The standalone GET stream for server-initiated messages; 405 means the upstream has none. */
  #listen(
    attempt: number,
    lastEventId: string | undefined,
    reconnecting: boolean,
  ): void {
    const headers = this.#common();
    headers["accept"] = "text/event-stream";
    if (lastEventId) headers["last-event-id"] = lastEventId;
    this.#fetch({ method: "GET", headers, signal: this.#abort?.signal })
      .then(async (response) => {
        if (!response.ok) {
          await response.body?.cancel();
          if (response.status === 405) return;
          throw new UpstreamHttpError(
            response.status,
            `Failed to open SSE stream: ${
              unfollowed(response, this.#url) ?? response.statusText
            }`,
          );
        }
        if (!response.body) return;
        const state = { lastEventId };
        try {
          await this.#read(response.body, state);
        } finally {
          this.#again(0, state.lastEventId);
        }
      })
      .catch((error) => {
        this.onerror?.(error instanceof Error ? error : new Error(`${error}`));
        // As the SDK: a first GET that fails is not retried, a reconnection is.
        if (reconnecting) this.#again(attempt + 1, lastEventId);
      });
  }

  #again(attempt: number, lastEventId: string | undefined): void {
    if (this.#closed || this.#abort?.signal.aborted) return;
    const delay = RECONNECT_DELAYS_MS[attempt];
    if (delay === undefined) {
      this.onerror?.(
        new Error(
          `Maximum reconnection attempts (${RECONNECT_DELAYS_MS.length}) exceeded.`,
        ),
      );
      return;
    }
    this.#reconnect = setTimeout(
      () => this.#listen(attempt, lastEventId, true),
      delay,
    );
  }

  /** Parses an SSE body as it arrives and delivers each `message` event. */
  async #read(
    body: ReadableStream<Uint8Array>,
    state: { lastEventId: string | undefined } | undefined,
  ): Promise<void> {
    const reader = body.getReader();
    const signal = this.#abort?.signal;
    // Cancelling the body, not only aborting the fetch, frees the connection (sse_fetch.ts).
    const cancel = () => reader.cancel().catch(() => {});
    signal?.addEventListener("abort", cancel, { once: true });
    const decoder = new TextDecoder();
    const parser = new SseParser({ ids: true });
    try {
      while (true) {
        const { value, done } = await reader.read();
        const events = done
          ? [...parser.push(decoder.decode()), ...parser.end()]
          : parser.push(decoder.decode(value, { stream: true }));
        for (const [i, event] of events.entries()) {
          if (event.id !== undefined && state) state.lastEventId = event.id;
          if (event.data === "" || event.event !== "message") continue;
          // The Client handles a notification a microtask later and a response
          // at once: let a progress notification land before the result after it.
          if (i > 0) await Promise.resolve();
          this.#parse(event.data);
        }
        if (done) break;
      }
    } catch (error) {
      if (!signal?.aborted) {
        this.onerror?.(new Error(`SSE stream disconnected: ${error}`));
      }
    } finally {
      signal?.removeEventListener("abort", cancel);
    }
  }

  #parse(data: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch (error) {
      this.onerror?.(asError(error));
      return;
    }
    this.#deliver(parsed);
  }

  #deliver(value: unknown): void {
    if (looksLikeMessage(value)) {
      this.onmessage?.(value);
    } else {
      this.onerror?.(new Error("not a JSON-RPC 2.0 message"));
    }
  }

  #common(): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.sessionId) headers["mcp-session-id"] = this.sessionId;
    if (this.#protocolVersion) {
      headers["mcp-protocol-version"] = this.#protocolVersion;
    }
    Object.assign(headers, this.#headers);
    const authorization = this.#authorization?.();
    if (authorization !== undefined) headers["authorization"] = authorization;
    return headers;
  }

  /** fetch, following a redirect only while it stays on the upstream's origin and keeps the method. */
  async #fetch(init: RequestInit): Promise<Response> {
    let url = this.#url;
    let response = await fetch(url, { ...init, redirect: "manual" });
    for (let hop = 0; hop < MAX_REDIRECTS; hop++) {
      const next = redirectTarget(response, url, init.method ?? "GET");
      if (!next) break;
      await response.body?.cancel();
      url = next;
      response = await fetch(url, { ...init, redirect: "manual" });
    }
    return response;
  }
}

function mediaType(contentType: string | null): string {
  if (!contentType) return "";
  const semicolon = contentType.indexOf(";");
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon))
    .trim().toLowerCase();
}

function redirectTarget(
  response: Response,
  from: URL,
  method: string,
): URL | undefined {
  if (!STATUS_REDIRECTS.has(response.status)) return undefined;
  // 301, 302 and 303 turn a request with a body into a GET: not followed.
  const keepsMethod = response.status === 307 || response.status === 308 ||
    method === "GET";
  const location = response.headers.get("location");
  if (!keepsMethod || !location) return undefined;
  let to: URL;
  try {
    to = new URL(location, from);
  } catch {
    return undefined;
  }
  const sameOrigin = to.protocol === from.protocol &&
    to.hostname === from.hostname && to.port === from.port;
  const addsUserinfo = (to.username || to.password) &&
    (to.username !== from.username || to.password !== from.password);
  return sameOrigin && !addsUserinfo ? to : undefined;
}

/** For a redirect that was not followed: where it pointed. */
/**
 * An MCP server's JSON-RPC error message in an error status's body, as
 * `: <message>`; any other body is left out: register_server probes URLs an
 * agent gives, and echoing what answers there (a loopback admin page, a
 * metadata service) would make the gateway a reader of internal services.
 */
function rpcErrorOf(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "";
  }
  const error = typeof parsed === "object" && parsed !== null &&
      Reflect.get(parsed, "jsonrpc") === "2.0"
    ? Reflect.get(parsed, "error")
    : undefined;
  const message = typeof error === "object" && error !== null
    ? Reflect.get(error, "message")
    : undefined;
  return typeof message === "string" && message !== ""
    ? `: ${message.slice(0, 200)}`
    : "";
}

function unfollowed(response: Response, from: URL): string | undefined {
  if (!STATUS_REDIRECTS.has(response.status)) return undefined;
  const location = response.headers.get("location");
  if (!location) return undefined;
  let to: string;
  try {
    to = new URL(location, from).href;
  } catch {
    to = location;
  }
  return `HTTP ${response.status} (redirect to ${to} not followed)`;
}
