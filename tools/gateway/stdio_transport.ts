// The gateway's stdio upstream: a child process speaking newline-delimited
// JSON-RPC, on Deno's own process streams. The SDK's StdioClientTransport runs
// on the node:child_process layer and checks each line with zod before the
// Client checks it again; both showed in the stdio leg's profile
// (bench/README.md, Gateway). Same environment, stderr and shutdown rules.

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
  /** Each line the child writes to stderr. */
  onStderrLine(line: string): void;
}

// The SDK's wait after closing stdin, then after SIGTERM.
const GRACE_MS = 2000;

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #server: StdioServer;
  readonly #encoder = new TextEncoder();
  #child?: Deno.ChildProcess;
  #stdin?: WritableStreamDefaultWriter<Uint8Array>;
  #pid: number | null = null;

  constructor(server: StdioServer) {
    this.#server = server;
  }

  /** The child's process id while it runs. */
  get pid(): number | null {
    return this.#pid;
  }

  start(): Promise<void> {
    if (this.#child) {
      return Promise.reject(new Error("StdioTransport already started"));
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
      // Node's wording, which the gateway's failure text recognizes.
      const code = error instanceof Deno.errors.NotFound ? " ENOENT" : "";
      return Promise.reject(
        new Error(`spawn ${server.command}${code}`, { cause: error }),
      );
    }
    this.#child = child;
    this.#pid = child.pid;
    this.#stdin = child.stdin.getWriter();
    const stdout = lines(child.stdout, (line) => this.#line(line));
    const stderr = lines(child.stderr, server.onStderrLine);
    Promise.all([child.status, stdout, stderr]).finally(() => {
      if (this.#child === child) this.#child = undefined;
      this.#pid = null;
      this.#stdin = undefined;
      this.onclose?.();
    });
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#stdin;
    if (!stdin) throw new Error("Not connected");
    try {
      await stdin.write(this.#encoder.encode(`${JSON.stringify(message)}\n`));
    } catch (error) {
      // As the SDK: a dead child's pipe is an error event; the exit closes the transport.
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Closes stdin; SIGTERM after 2 s, SIGKILL 2 s later (the SDK's shutdown). */
  async close(): Promise<void> {
    const child = this.#child;
    const stdin = this.#stdin;
    if (!child) return;
    this.#child = undefined;
    this.#stdin = undefined;
    await stdin?.close().catch(() => {});
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      if (await exitsWithin(child, GRACE_MS)) return;
      try {
        child.kill(signal);
      } catch {
        return; // it ended meanwhile
      }
    }
  }

  #line(line: string): void {
    if (line.trim() === "") return;
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

/** Reads `stream` to its end, calling `each` per line (without its "\n" or "\r\n"). */
async function lines(
  stream: ReadableStream<Uint8Array>,
  each: (line: string) => void,
): Promise<void> {
  const decoder = new TextDecoder();
  let rest = "";
  try {
    for await (const chunk of stream) {
      const text = rest + decoder.decode(chunk, { stream: true });
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
    }
  } catch {
    // The pipe broke: the child is gone, and its exit closes the transport.
  }
  rest += decoder.decode();
  if (rest !== "") each(rest);
}
