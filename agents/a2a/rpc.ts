// What one A2A JSON-RPC call answers, in protocol terms: one JSON-RPC message,
// or a stream of them for the streaming methods. routes/api/a2a.ts writes them as
// an HTTP body or as server-sent events.

import type { JsonValue } from "../../platform/store/mod.ts";

export type RpcId = string | number | null;

/** One JSON-RPC response, or a stream of them (`SendStreamingMessage`, `SubscribeToTask`). */
export type RpcReply =
  | { message: JsonValue }
  | { stream: ReadableStream<JsonValue> };

/** A JSON-RPC error: -32700/-32600/-32601/-32602/-32603, or A2A's -32001 (TaskNotFound) … -32009 (VersionNotSupported). */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: JsonValue,
  ) {
    super(message);
  }

  toJson(): JsonValue {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export function rpcResult(id: RpcId, result: JsonValue): RpcReply {
  return { message: { jsonrpc: "2.0", id, result } };
}

export function rpcError(id: RpcId, error: RpcError): RpcReply {
  return { message: { jsonrpc: "2.0", id, error: error.toJson() } };
}

/**
 * A stream of JSON-RPC results whose events may be produced before it is
 * opened: they wait until `open` has written the first event, so the stream
 * always starts with it.
 */
export class RpcStream {
  /** Called when the client goes away. */
  onCancel?: () => void;
  #id: RpcId;
  #controller: ReadableStreamDefaultController<JsonValue> | undefined;
  #stream: ReadableStream<JsonValue>;
  #held: JsonValue[] | undefined = [];
  #closeWhenOpen = false;
  #done = false;

  constructor(id: RpcId) {
    this.#id = id;
    this.#stream = new ReadableStream<JsonValue>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => {
        this.#done = true;
        this.onCancel?.();
      },
    });
  }

  send(result: JsonValue): void {
    const message = this.#message(result);
    if (this.#held !== undefined) this.#held.push(message);
    else this.#enqueue(message);
  }

  /** Writes `first`, then whatever was sent before. */
  open(first: JsonValue): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    this.#enqueue(this.#message(first));
    for (const message of held) this.#enqueue(message);
    if (this.#closeWhenOpen) this.close();
  }

  close(): void {
    if (this.#held !== undefined) {
      this.#closeWhenOpen = true;
      return;
    }
    if (this.#done) return;
    this.#done = true;
    try {
      this.#controller?.close();
    } catch {
      // already closed by the client
    }
  }

  reply(): RpcReply {
    return { stream: this.#stream };
  }

  #message(result: JsonValue): JsonValue {
    return { jsonrpc: "2.0", id: this.#id, result };
  }

  #enqueue(message: JsonValue): void {
    if (this.#done) return;
    try {
      this.#controller?.enqueue(message);
    } catch {
      this.#done = true;
    }
  }
}
