// The gateway's client side of MCP over stdio, on Deno's own process API: a
// child speaking newline-delimited JSON-RPC. The SDK's StdioClientTransport
// spawns through cross-spawn and node:child_process, checks every line with
// zod's JSONRPCMessageSchema (the Client checks each result again) and writes
// each message on its own; this one checks the JSON-RPC envelope only and
// writes the messages of one event-loop turn (or of a write in progress)
// together (bench/README.md, Gateway). Environment, stderr and shutdown are
// the SDK's: its default environment plus the configured one, stdin closed
// first, SIGTERM after 2 s, SIGKILL 2 s later.

import { asError } from "../../../platform/errors.ts";
import type { JSONRPCMessage, Transport } from "../../../platform/mcp_sdk.ts";
import { LineWriter, readLines } from "../../../platform/line_frames.ts";
import { looksLikeMessage } from "./jsonrpc_envelope.ts";

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

export class StdioUpstreamTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #server: StdioServer;
  #child?: Deno.ChildProcess;
  #stdin?: WritableStreamDefaultWriter<Uint8Array>;
  /** Messages sent in one turn (or while a write is in progress) share one write. */
  readonly #writer = new LineWriter({
    write: async (bytes) => {
      const stdin = this.#stdin;
      if (!stdin) throw new Error("Not connected");
      await stdin.write(bytes);
      return bytes.length;
    },
  });
  #pid: number | null = null;
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
        env: { ...defaultEnvironment(), ...server.env },
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
    const stdout = readLines(child.stdout, {
      line: (line) => this.#line(line),
      // As the SDK's ReadBuffer: a line past its bound ends the connection.
      oversized: (length) => {
        this.onerror?.(
          new Error(`Skipped a line of ${length} characters: over 10 MiB`),
        );
        this.close().catch(() => {});
      },
    });
    const stderr = readLines(child.stderr, {
      line: (line) => server.onStderrLine(line),
      oversized: () => {},
    });
    // As node's "close" event: the process ended and its pipes are drained.
    Promise.all([child.status, stdout, stderr]).finally(() => {
      if (this.#child === child) this.#child = undefined;
      this.#pid = null;
      this.#stdin = undefined;
      try {
        this.onclose?.();
      } catch (error) {
        // Not an unhandled rejection: a listener's bug must not end the daemon.
        this.onerror?.(
          asError(error),
        );
      }
    });
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.#stdin) return Promise.reject(new Error("Not connected"));
    return this.#writer.write(JSON.stringify(message));
  }

  /** Closes stdin; SIGTERM after 2 s, SIGKILL 2 s later (the SDK's shutdown). */
  async close(): Promise<void> {
    this.#closed = true;
    const child = this.#child;
    const stdin = this.#stdin;
    if (!child) return;
    this.#child = undefined;
    this.#stdin = undefined;
    // Not awaited: a child that stopped reading would hold the close (it
    // waits for the pending write) and keep the signals below from going out.
    stdin?.close().catch(() => {});
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
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      this.onerror?.(asError(error));
      return;
    }
    if (looksLikeMessage(parsed)) this.onmessage?.(parsed);
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
 * The variables a child inherits, as the SDK's stdio client chooses them
 * (`getDefaultEnvironment`, after sudo's list), without importing that module
 * and the CommonJS cross-spawn it brings.
 */
const INHERITED_ENV = Deno.build.os === "windows"
  ? [
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PROCESSOR_ARCHITECTURE",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
    "PROGRAMFILES",
  ]
  : ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

function defaultEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = Deno.env.get(key);
    // Exported shell functions ("() { ...") are a known injection path.
    if (value !== undefined && !value.startsWith("()")) env[key] = value;
  }
  return env;
}
