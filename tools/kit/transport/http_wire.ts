// The wire details of the kit's streamable HTTP session transport
// (http_session.ts): SSE framing, JSON-RPC shape tests, request bodies,
// JSON-RPC error responses.

import type {
  JSONRPCMessage,
  RequestId,
  Transport,
} from "../../../platform/mcp_sdk.ts";

export type MessageExtra = NonNullable<
  Parameters<NonNullable<Transport["onmessage"]>>[1]
>;

/** The SDK transport's default limit. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export const encoder = new TextEncoder();

const KEEP_ALIVE = encoder.encode(": keepalive\n\n");

/** An open SSE response body. */
export interface SseStream {
  controller: ReadableStreamDefaultController<Uint8Array>;
  /** Event ids already sent by a replay, not to be written twice. */
  replayed?: Set<string>;
  close(): void;
}

/**
 * An SSE body with a keep-alive comment every `keepAliveMs` (0: none);
 * `ended` runs when it is closed or its client goes away.
 */
export function openSse(
  keepAliveMs: number,
  ended: (stream: SseStream) => void,
  replayed?: Set<string>,
): { stream: SseStream; body: ReadableStream<Uint8Array> } {
  let timer: ReturnType<typeof setInterval> | undefined;
  let stream: SseStream | undefined;
  const end = () => {
    if (timer !== undefined) clearInterval(timer);
    if (stream) ended(stream);
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      stream = {
        controller,
        replayed,
        close() {
          end();
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        },
      };
    },
    cancel: end,
  });
  // `start` runs inside the constructor: the stream exists by now.
  if (!stream) throw new Error("ReadableStream did not start");
  if (keepAliveMs > 0) {
    const open = stream;
    timer = setInterval(() => {
      try {
        open.controller.enqueue(KEEP_ALIVE);
      } catch {
        end();
      }
    }, keepAliveMs);
    Deno.unrefTimer(timer);
  }
  return { stream, body };
}

export function sseResponse(
  body: ReadableStream<Uint8Array>,
  sessionId: string | undefined,
): Response {
  const headers: Record<string, string> = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache, no-transform",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
  };
  if (sessionId) headers["mcp-session-id"] = sessionId;
  return new Response(body, { headers });
}

export function sseEvent(message: JSONRPCMessage, eventId: string): Uint8Array {
  return encoder.encode(
    `event: message\nid: ${eventId}\ndata: ${JSON.stringify(message)}\n\n`,
  );
}

export function isRequest(
  message: JSONRPCMessage,
): message is JSONRPCMessage & { id: RequestId; method: string } {
  return "method" in message && "id" in message;
}

export function isInitialize(
  message: JSONRPCMessage,
): message is JSONRPCMessage & { params?: { protocolVersion?: unknown } } {
  return isRequest(message) && message.method === "initialize";
}

export function wantsProgress(message: JSONRPCMessage): boolean {
  if (!isRequest(message) || !("params" in message)) return false;
  const meta: unknown = message.params?._meta;
  return typeof meta === "object" && meta !== null &&
    Reflect.get(meta, "progressToken") !== undefined;
}

/** The request a `notifications/cancelled` names, if the message is one. */
export function cancelledId(message: JSONRPCMessage): RequestId | undefined {
  if (
    !("method" in message) || "id" in message ||
    message.method !== "notifications/cancelled"
  ) {
    return undefined;
  }
  const id: unknown = message.params?.requestId;
  if (typeof id === "string") return id;
  return typeof id === "number" && Number.isSafeInteger(id) ? id : undefined;
}

/** One JSON body; with every request cancelled, an SSE stream that ends at once. */
export function jsonAnswer(
  answers: JSONRPCMessage[],
  sessionId: string | undefined,
): Response {
  if (answers.length === 0) {
    // A request's POST gets JSON or SSE (spec); a cancelled one no response.
    const { stream, body } = openSse(0, () => {});
    stream.close();
    return sseResponse(body, sessionId);
  }
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
  };
  if (sessionId) headers["mcp-session-id"] = sessionId;
  return new Response(
    JSON.stringify(answers.length === 1 ? answers[0] : answers),
    { status: 200, headers },
  );
}

/** The request's headers and URL, built only if a handler reads them. */
export function requestInfoOf(request: Request): MessageExtra["requestInfo"] {
  return new LazyRequestInfo(request);
}

/** Getters on a class's prototype: cheaper per request than an object literal's own. */
class LazyRequestInfo {
  readonly #request: Request;
  #headers: Record<string, string> | undefined;
  #url: URL | undefined;

  constructor(request: Request) {
    this.#request = request;
  }

  get headers(): Record<string, string> {
    return this.#headers ??= Object.fromEntries(
      this.#request.headers.entries(),
    );
  }

  get url(): URL {
    return this.#url ??= new URL(this.#request.url);
  }
}

export function isJsonType(header: string | null): boolean {
  if (header === "application/json") return true;
  return header?.split(";", 1)[0].trim().toLowerCase() === "application/json";
}

/** The body as text, undefined past the size limit (in UTF-16 units once read). */
export async function bodyText(request: Request): Promise<string | undefined> {
  if (Number(request.headers.get("content-length")) > MAX_BODY_BYTES) {
    return undefined;
  }
  const text = await request.text();
  return text.length > MAX_BODY_BYTES ? undefined : text;
}

export function rpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code, message }, id: null },
    { status, headers },
  );
}

/**
 * The error's name and message without the JSON the SDK appends to some
 * (a client's message, which may carry secrets).
 */
export function withoutPayload(
  error: Error,
): { name: string; message: string } {
  const payload = error.message.search(/: [[{]/);
  return {
    name: error.name,
    message: payload === -1 ? error.message : error.message.slice(0, payload),
  };
}
