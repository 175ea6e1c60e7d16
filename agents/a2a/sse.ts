// JSON-RPC errors and the server-sent event stream that carries streaming
// A2A results (`data: {"jsonrpc":"2.0","id":…,"result":…}` per event).

import type { JsonValue } from "../../platform/store.ts";

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

const encoder = new TextEncoder();

/**
 * An SSE response whose events may be produced before it is opened: they
 * wait until `open` has written the first event, so the stream always
 * starts with it.
 */
export class SseChannel {
  /** Called when the client goes away. */
  onCancel?: () => void;
  #id: string | number | null;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #stream: ReadableStream<Uint8Array>;
  #held: Uint8Array[] | undefined = [];
  #closeWhenOpen = false;
  #done = false;

  constructor(id: string | number | null) {
    this.#id = id;
    this.#stream = new ReadableStream<Uint8Array>({
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
    this.#write({ jsonrpc: "2.0", id: this.#id, result });
  }

  /** Writes `first`, then whatever was sent before. */
  open(first: JsonValue): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    this.#enqueue(frame({ jsonrpc: "2.0", id: this.#id, result: first }));
    for (const chunk of held) this.#enqueue(chunk);
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

  response(): Response {
    return new Response(this.#stream, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
      },
    });
  }

  #write(message: JsonValue): void {
    const chunk = frame(message);
    if (this.#held !== undefined) this.#held.push(chunk);
    else this.#enqueue(chunk);
  }

  #enqueue(chunk: Uint8Array): void {
    if (this.#done) return;
    try {
      this.#controller?.enqueue(chunk);
    } catch {
      this.#done = true;
    }
  }
}

function frame(message: JsonValue): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(message)}\n\n`);
}
