// The gateway's client side of MCP over stdio, on Deno's own process API: a
// child speaking newline-delimited JSON-RPC. The SDK's StdioClientTransport
// spawns through cross-spawn and node:child_process, checks every line with
// zod's JSONRPCMessageSchema (the Client checks each result again) and writes
// each message on its own; this one checks the JSON-RPC envelope only and
// writes the messages of one event-loop turn (or of a write in progress)
// together (bench/README.md, Gateway). Environment, stderr and shutdown are
// the SDK's: its default environment plus the configured one, stdin closed
// first, SIGTERM after 2 s, SIGKILL 2 s later.

import {
  getDefaultEnvironment,
  type JSONRPCMessage,
  type Transport,
} from "../../platform/mcp_sdk.ts";
import { isMessage } from "./http_transport.ts";

export interface StdioServer {
  command: string;
  args: readonly string[];
  /** Added to the SDK's default environment (HOME, PATH, ...), as the SDK does. */
  env: Readonly<Record<string, string>>;
  cwd?: string;
  /** Each non-empty line the child writes to stderr. */
  onStderrLine(line: string): void;
}

/** The SDK's wait after closing stdin, then after SIGTERM. */
const GRACE_MS = 2000;
/** The SDK's bound on an unfinished line (ReadBuffer's default). */
const MAX_LINE = 10 * 1024 * 1024;
const READ_CHUNK = 64 * 1024;

export class StdioUpstreamTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #server: StdioServer;
  readonly #encoder = new TextEncoder();
  #child?: Deno.ChildProcess;
  #stdin?: WritableStreamDefaultWriter<Uint8Array>;
  #pid: number | null = null;
  /** Serialized messages waiting for the next write; all resolve with `#batch`. */
  #pending = "";
  #batch?: PromiseWithResolvers<void>;
  #writing = false;
  #closed = false;

  constructor(server: StdioServer) {
    this.#server = server;
  }

  /** The child's process id while it runs (null before start and after it ended). */
  get pid(): number | null {
    return this.#pid;
  }

  start(): Promise<void> {
    if (this.#child || this.#closed) {
      return Promise.reject(
        new Error("StdioUpstreamTransport already started"),
      );
    }
    const server = this.#server;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(server.command, {
        args: [...server.args],
        env: { ...getDefaultEnvironment(), ...server.env },
        clearEnv: true,
        cwd: server.cwd,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    } catch (error) {
      // Node's wording ("spawn node ENOENT"), which failures.ts recognizes.
      const code = error instanceof Deno.errors.NotFound ? " ENOENT" : "";
      const failure = new Error(`spawn ${server.command}${code}`, {
        cause: error,
      });
      this.onerror?.(failure);
      return Promise.reject(failure);
    }
    this.#child = child;
    this.#pid = child.pid;
    this.#stdin = child.stdin.getWriter();
    const stdout = readLines(child.stdout, (line) => this.#line(line), () => {
      this.onerror?.(
        new Error(`ReadBuffer exceeded maximum size of ${MAX_LINE} bytes`),
      );
      this.close().catch(() => {});
    });
    const stderr = readLines(child.stderr, (line) => {
      if (line.trim() !== "") server.onStderrLine(line);
    });
    // As node's "close" event: the process ended and its pipes are drained.
    Promise.all([child.status, stdout, stderr]).finally(() => {
      if (this.#child === child) this.#child = undefined;
      this.#pid = null;
      this.#stdin = undefined;
      this.#fail(new Error("Not connected"));
      try {
        this.onclose?.();
      } catch (error) {
        // Not an unhandled rejection: a listener's bug must not end the daemon.
        this.onerror?.(
          error instanceof Error ? error : new Error(String(error)),
        );
      }
    });
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.#stdin) return Promise.reject(new Error("Not connected"));
    this.#pending += `${JSON.stringify(message)}\n`;
    this.#batch ??= Promise.withResolvers<void>();
    const batch = this.#batch.promise;
    // Messages sent in this turn (or while a write is in progress) share one write.
    if (!this.#writing) {
      this.#writing = true;
      queueMicrotask(() => this.#flush());
    }
    return batch;
  }

  async #flush(): Promise<void> {
    while (this.#pending !== "") {
      const stdin = this.#stdin;
      const batch = this.#batch;
      const bytes = this.#encoder.encode(this.#pending);
      this.#pending = "";
      this.#batch = undefined;
      if (!stdin) {
        batch?.reject(new Error("Not connected"));
        continue;
      }
      try {
        await stdin.write(bytes);
        batch?.resolve();
      } catch (error) {
        // A dead child's pipe: its exit closes the transport.
        const failure = error instanceof Error
          ? error
          : new Error(String(error));
        this.onerror?.(failure);
        batch?.reject(failure);
      }
    }
    this.#writing = false;
  }

  #fail(error: Error): void {
    this.#pending = "";
    this.#batch?.reject(error);
    this.#batch?.promise.catch(() => {});
    this.#batch = undefined;
  }

  /** Closes stdin; SIGTERM after 2 s, SIGKILL 2 s later (the SDK's shutdown). */
  async close(): Promise<void> {
    this.#closed = true;
    const child = this.#child;
    const stdin = this.#stdin;
    if (!child) return;
    this.#child = undefined;
    this.#stdin = undefined;
    this.#fail(new Error("Not connected"));
    await stdin?.close().catch(() => {});
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      if (await exitsWithin(child, GRACE_MS)) return;
      try {
        child.kill(signal);
      } catch {
        return; // it ended meanwhile
      }
    }
    await child.status;
  }

  #line(line: string): void {
    if (line === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (isMessage(parsed)) this.onmessage?.(parsed);
    else this.onerror?.(new Error("not a JSON-RPC 2.0 message"));
  }
}

async function exitsWithin(
  child: Deno.ChildProcess,
  ms: number,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([child.status.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Reads `stream` to its end, calling `each` per line without its "\n" or
 * "\r\n" (a last line without "\n" included). A BYOB reader reuses one buffer
 * instead of a new 64 KiB chunk per read.
 */
export async function readLines(
  stream: ReadableStream<Uint8Array>,
  each: (line: string) => void,
  tooLong?: () => void,
): Promise<void> {
  const decoder = new TextDecoder();
  const reader = stream.getReader({ mode: "byob" });
  let buffer = new Uint8Array(READ_CHUNK);
  let rest = "";
  try {
    while (true) {
      const { value, done } = await reader.read(buffer);
      if (done || value === undefined) break;
      const text = rest + decoder.decode(value, { stream: true });
      buffer = new Uint8Array(value.buffer);
      let start = 0;
      for (
        let end = text.indexOf("\n");
        end >= 0;
        end = text.indexOf("\n", start)
      ) {
        each(
          text.slice(start, text.charCodeAt(end - 1) === 0x0d ? end - 1 : end),
        );
        start = end + 1;
      }
      rest = start === 0 ? text : text.slice(start);
      if (rest.length > MAX_LINE && tooLong) {
        rest = "";
        tooLong();
      }
    }
  } catch {
    // The pipe broke: the child is gone, and its exit closes the transport.
  } finally {
    reader.releaseLock();
  }
  rest += decoder.decode();
  if (rest !== "") each(rest.endsWith("\r") ? rest.slice(0, -1) : rest);
}
