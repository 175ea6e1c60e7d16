// The kit's stdio server transport on Deno's own streams: newline-delimited
// JSON-RPC on stdin/stdout (platform/line_frames.ts), each message checked for
// its JSON-RPC envelope only. The SDK's Protocol validates each message's full
// shape again on arrival, so the SDK transport's zod parse of every line is
// not repeated here; answers written in one turn leave in one write.

import type {
  JSONRPCMessage,
  Transport,
} from "../../../platform/mcp_sdk_types.ts";
import { asError } from "../../../platform/errors.ts";
import {
  type ByteSink,
  type ChunkReader,
  chunkReader,
  LineSplitter,
  LineWriter,
} from "../../../platform/line_frames.ts";
import { stdoutSink } from "../../../platform/stdout.ts";
import { envelopeProblem, isMessage } from "./jsonrpc_envelope.ts";

export interface StdioStreams {
  /** Defaults to `Deno.stdin.readable`. */
  input?: ReadableStream<Uint8Array>;
  /** Defaults to synchronous writes to stdout (platform/stdout.ts). */
  output?: ByteSink;
  /** The longest line accepted, in UTF-16 code units (default 10 MiB, as the SDK's). */
  maxLine?: number;
  /**
   * A request already answered (by `agentd mcp`'s stdio front, cli/stdio_front.ts,
   * before the server loaded): the server's answer to it is dropped, once.
   */
  answered?: string | number;
}

/**
 * An MCP server transport over stdin/stdout. Like the SDK's: a line that is
 * not JSON or not a JSON-RPC message goes to `onerror` and is skipped, and the
 * end of input does not close the transport (answers to calls under way still
 * go out); `ended` says it. Unlike the SDK's, a line over the limit is skipped
 * instead of closing the transport, and a last line without a newline counts.
 */
export class DenoStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  /** Resolves when the input ends (the client closed our stdin) or fails. */
  readonly ended: Promise<void>;
  #ended = Promise.withResolvers<void>();
  #input: ReadableStream<Uint8Array> | undefined;
  #reader: ChunkReader | undefined;
  #writer: LineWriter;
  #splitter: LineSplitter;
  #started = false;
  #closed = false;
  #answered: string | number | undefined;

  constructor(streams: StdioStreams = {}) {
    this.ended = this.#ended.promise;
    this.#input = streams.input;
    this.#answered = streams.answered;
    this.#writer = new LineWriter(
      streams.output ?? stdoutSink(),
      (error) => this.#writeFailed(error),
    );
    this.#splitter = new LineSplitter({
      line: (text) => this.#receive(text),
      oversized: (length) =>
        this.onerror?.(
          new Error(
            `Skipped a stdin line of ${length} characters: longer than the limit`,
          ),
        ),
    }, { maxLine: streams.maxLine });
  }

  start(): Promise<void> {
    if (this.#started) {
      return Promise.reject(new Error("DenoStdioTransport already started"));
    }
    this.#started = true;
    this.#reader = chunkReader(this.#input ?? Deno.stdin.readable);
    this.#read(this.#reader);
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (
      this.#answered !== undefined && "id" in message &&
      !("method" in message) && message.id === this.#answered
    ) {
      this.#answered = undefined;
      return Promise.resolve();
    }
    return this.#writer.write(JSON.stringify(message));
  }

  /** Resolves once every message sent so far is written out. */
  drain(): Promise<void> {
    return this.#writer.drain();
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    const reader = this.#reader;
    this.#reader = undefined;
    // Not awaited: a read of stdin under way may not end until more input comes.
    reader?.cancel().catch(() => {});
    this.#ended.resolve();
    this.onclose?.();
    return Promise.resolve();
  }

  /** stdout is gone (the client closed it) or broken: nothing more can be answered. */
  #writeFailed(error: Error): void {
    if (this.#closed) return;
    this.onerror?.(
      new Error(`Writing to stdout failed, closing: ${error.message}`, {
        cause: error,
      }),
    );
    this.close();
  }

  async #read(reader: ChunkReader): Promise<void> {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk === undefined || this.#closed) break;
        this.#splitter.push(chunk);
      }
      if (!this.#closed) {
        this.#splitter.end();
        // A turn for the calls just dispatched to start, so shutdown waits for them.
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    } catch (error) {
      if (!this.#closed) this.onerror?.(asError(error));
    } finally {
      this.#ended.resolve();
    }
  }

  #receive(line: string): void {
    if (this.#closed) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.onerror?.(asError(error));
      return;
    }
    if (!isMessage(value)) {
      this.onerror?.(
        new Error(`Not a JSON-RPC 2.0 message: ${envelopeProblem(value)}`),
      );
      return;
    }
    try {
      this.onmessage?.(value);
    } catch (error) {
      this.onerror?.(asError(error));
    }
  }
}
