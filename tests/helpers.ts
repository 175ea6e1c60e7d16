// Shared by the tests that drive agentd as a real process.

import { fileURLToPath as fromFileUrl } from "node:url";
import { createLogger, type Logger, type LogLevel } from "../platform/log.ts";
import { StdioClientTransport } from "../platform/mcp_sdk_stdio_client.ts";

export const ROOT = fromFileUrl(new URL("..", import.meta.url));
/** main.ts's CLI with the test fixtures as its servers. */
export const FIXTURE_CLI = fromFileUrl(
  new URL("./fixtures/agentd.ts", import.meta.url),
);

export interface LogLine {
  time: string;
  level: string;
  event: string;
  [key: string]: unknown;
}

export interface Daemon {
  process: Deno.ChildProcess;
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /**
   * Every JSON log line read from stderr so far. A line may come after the
   * answer it belongs to (info lines are batched, platform/log.ts, and stderr
   * is read apart from the sockets): wait for one with `logged`.
   */
  logs: LogLine[];
  /** Lines on stderr that were not JSON (should stay empty). */
  stray: string[];
  /** Sends a signal and resolves with the exit status once stderr is drained. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
  status: Promise<Deno.CommandStatus>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Resolve once this log event appears (default `listening`). */
  readyEvent?: string;
  /** Flags for `deno run` itself (before the module). */
  denoFlags?: string[];
  /** stderr lines that are not ours and not strays (e.g. the inspector's). */
  noise?: RegExp;
}

/**
 * What Deno itself may print before our code runs: another test's Deno
 * process holding node_modules (a parallel run in a fresh clone). Not ours.
 */
export const DENO_LAUNCHER = /^Blocking waiting for file lock on /;

/** Runs `agentd <args>` (fixture servers), reading its JSON logs from stderr. */
export async function spawnDaemon(
  args: string[],
  options: SpawnOptions = {},
): Promise<Daemon> {
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...options.denoFlags ?? [], FIXTURE_CLI, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...options.env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const logs: LogLine[] = [];
  const stray: string[] = [];
  const readyEvent = options.readyEvent ?? "listening";
  const ready = Promise.withResolvers<LogLine>();
  const drained = (async () => {
    for await (const line of lines(process.stderr)) {
      const parsed = parseLogLine(line);
      if (parsed) {
        logs.push(parsed);
        if (parsed.event === readyEvent) ready.resolve(parsed);
      } else if (
        line.trim() !== "" && !DENO_LAUNCHER.test(line) &&
        !options.noise?.test(line)
      ) {
        stray.push(line);
      }
    }
    ready.reject(
      new Error(`agentd exited before "${readyEvent}": ${stray.join("\n")}`),
    );
  })();
  const status = Promise.all([process.status, drained]).then(([status]) =>
    status
  );
  const listening = await ready.promise;
  const port = typeof listening.port === "number" ? listening.port : 0;
  return {
    process,
    port,
    url: `http://127.0.0.1:${port}`,
    logs,
    stray,
    status,
    async stop(signal: Deno.Signal = "SIGTERM") {
      try {
        process.kill(signal);
      } catch {
        // already exited
      }
      return await status;
    },
  };
}

/** `agentd serve` on a free port with its data in `dataDir`, plus `extra` flags. */
export function spawnServe(
  dataDir: string,
  options: SpawnOptions & { extra?: string[] } = {},
): Promise<Daemon> {
  const { extra = [], ...spawn } = options;
  return spawnDaemon(
    ["serve", "--port", "0", "--data-dir", dataDir, ...extra],
    spawn,
  );
}

/**
 * `agentd serve` with `config` written as `<dir>/agentd.json` and its data in
 * `<dir>/data` (a token, agent tokens, sections: what a test sets up).
 */
export async function spawnServeWith(
  dir: string,
  config: Record<string, unknown>,
  options: SpawnOptions = {},
): Promise<Daemon> {
  const file = `${dir}/agentd.json`;
  await Deno.writeTextFile(file, JSON.stringify(config));
  return await spawnServe(`${dir}/data`, {
    ...options,
    extra: ["--config", file],
  });
}

/** An HTTP reply read whole: its body as text, and as JSON when it parses. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body (undefined when not JSON). */
  json: unknown;
}

export async function readReply(response: Response): Promise<Reply> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** A request to a daemon's HTTP API; `body` is sent as JSON unless a string. */
export async function api(
  daemon: Daemon,
  method: string,
  path: string,
  body?: unknown,
): Promise<Reply> {
  return await readReply(
    await fetch(`${daemon.url}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined
        ? undefined
        : typeof body === "string"
        ? body
        : JSON.stringify(body),
    }),
  );
}

/** Runs the CLI to completion and returns its exit code and output. */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", FIXTURE_CLI, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

export function parseLogLine(line: string): LogLine | undefined {
  try {
    const value: unknown = JSON.parse(line);
    if (
      typeof value === "object" && value !== null && "event" in value &&
      "level" in value &&
      "time" in value && typeof value.event === "string" &&
      typeof value.level === "string" &&
      typeof value.time === "string"
    ) {
      return {
        ...value,
        event: value.event,
        level: value.level,
        time: value.time,
      };
    }
  } catch {
    // not JSON
  }
  return undefined;
}

/** A logger whose JSON lines are kept, parsed, in `logs`. */
export function capturedLog(
  level?: LogLevel,
): { log: Logger; logs: LogLine[] } {
  const logs: LogLine[] = [];
  const log = createLogger({
    level,
    sink: (line) => {
      const parsed = parseLogLine(line);
      if (parsed) logs.push(parsed);
    },
  });
  return { log, logs };
}

export async function* lines(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let index: number;
    while ((index = buffer.indexOf("\n")) !== -1) {
      yield buffer.slice(0, index);
      buffer = buffer.slice(index + 1);
    }
  }
  if (buffer !== "") yield buffer;
}

/**
 * A port nothing listens on right now, for a server another process binds
 * later. Picked below the kernel's ephemeral range (32768+), where parallel
 * tests' `port: 0` listeners and outgoing connections never land, so the
 * port is still free when the other process binds it.
 */
export function freePort(): number {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    try {
      const listener = Deno.listen({ hostname: "127.0.0.1", port });
      listener.close();
      return port;
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
    }
  }
}

export async function tempDir(): Promise<
  { path: string; [Symbol.asyncDispose](): Promise<void> }
> {
  const path = await Deno.makeTempDir({ prefix: "agentd-test-" });
  return {
    path,
    async [Symbol.asyncDispose]() {
      await Deno.remove(path, { recursive: true });
    },
  };
}

/** Polls `read` until `accept` says yes or `timeoutMs` passes. */
export async function waitFor<T>(
  read: () => T | Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting; last value: ${JSON.stringify(value)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The first of a child process's `logs` that `match` accepts, once it is read:
 * a daemon writes info lines in batches (platform/log.ts, STDERR_BATCH_MS)
 * and its stderr is read apart from its answers, so a line an answer implies
 * may not be there yet. With `count`, waits for that many and returns them all.
 */
export async function logged(
  logs: readonly LogLine[],
  match: (line: LogLine) => boolean,
  timeoutMs = 10_000,
): Promise<LogLine> {
  const [line] = await loggedAll(logs, match, 1, timeoutMs);
  return line;
}

/** At least `count` lines of `logs` that `match` accepts, once read (see `logged`). */
export async function loggedAll(
  logs: readonly LogLine[],
  match: (line: LogLine) => boolean,
  count: number,
  timeoutMs = 10_000,
): Promise<LogLine[]> {
  return await waitFor(
    () => logs.filter(match),
    (found) => found.length >= count,
    timeoutMs,
  );
}

/**
 * One HTTP/1.1 request over a raw socket: `fetch` will not send a Host
 * header of our choosing, and the Host checks need exactly that.
 */
export async function rawRequest(
  port: number,
  request: {
    method: string;
    path: string;
    headers: Record<string, string>;
    body?: string;
  },
): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const body = new TextEncoder().encode(request.body ?? "");
    const head = [
      `${request.method} ${request.path} HTTP/1.1`,
      ...Object.entries({
        connection: "close",
        "content-length": String(body.length),
        ...request.headers,
      })
        .map(([name, value]) => `${name}: ${value}`),
      "",
      "",
    ].join("\r\n");
    const encoded = new TextEncoder().encode(head);
    const message = new Uint8Array(encoded.length + body.length);
    message.set(encoded);
    message.set(body, encoded.length);
    let written = 0;
    while (written < message.length) {
      written += await conn.write(message.subarray(written));
    }
    const response = await new Response(conn.readable).text();
    const status = Number(response.match(/^HTTP\/1\.1 (\d{3})/)?.[1] ?? 0);
    return { status, body: response.slice(response.indexOf("\r\n\r\n") + 4) };
  } finally {
    try {
      conn.close();
    } catch {
      // the response stream already closed it
    }
  }
}

/** The initialize request of a 2025-11-25 client, for raw sessions. */
export const INITIALIZE_REQUEST = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  },
};

export interface StdioSession {
  child: Deno.ChildProcess;
  /** Lines read from stdout and stderr so far. */
  stdout: string[];
  stderr: string[];
  send(message: unknown): Promise<void>;
  /** Writes raw bytes to stdin (framing tests). */
  write(bytes: Uint8Array): Promise<void>;
  /** Closes stdin (the client goes away) and waits for the exit status. */
  finish(): Promise<Deno.CommandStatus>;
  /** Waits for the exit status (after a signal) and for both streams to end. */
  status: Promise<Deno.CommandStatus>;
}

/** Runs `agentd <args>` with piped stdio, for raw JSON-RPC sessions. */
export function spawnStdio(args: string[]): StdioSession {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", FIXTURE_CLI, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout: string[] = [];
  const stderr: string[] = [];
  const read = async (stream: ReadableStream<Uint8Array>, into: string[]) => {
    for await (const line of lines(stream)) into.push(line);
  };
  const drained = Promise.all([
    read(child.stdout, stdout),
    read(child.stderr, stderr),
  ]);
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const status = Promise.all([child.status, drained]).then(([status]) =>
    status
  );
  return {
    child,
    stdout,
    stderr,
    send: (message) =>
      writer.write(encoder.encode(JSON.stringify(message) + "\n")),
    write: (bytes) => writer.write(bytes),
    async finish() {
      await writer.close();
      return await status;
    },
    status: status.finally(() => writer.close().catch(() => {})),
  };
}

/**
 * `agentd mcp conformance` over stdio, initialized, with a slow_write (id 2)
 * sent: the call in flight that shutdown and EOF must still answer.
 */
export async function stdioSlowWrite(
  dataDir: string,
  write: { key: string; value: string; delay_ms: number },
): Promise<StdioSession> {
  const session = spawnStdio(["mcp", "conformance", "--data-dir", dataDir]);
  await session.send(INITIALIZE_REQUEST);
  await session.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await session.send({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "slow_write", arguments: write },
  });
  return session;
}

/**
 * An MCP SDK stdio transport that spawns `agentd <args>` (fixture servers),
 * with its stderr piped; `env` goes on top of the SDK's default environment.
 */
export function fixtureStdio(
  args: string[],
  env?: Record<string, string>,
): StdioClientTransport {
  return new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", FIXTURE_CLI, ...args],
    cwd: ROOT,
    env,
    stderr: "pipe",
  });
}

/** The JSON-RPC response with this id among stdout lines, if it arrived. */
export function responseTo(
  stdout: readonly string[],
  id: number,
): Record<string, unknown> | undefined {
  for (const line of stdout) {
    const message: unknown = JSON.parse(line);
    if (
      typeof message === "object" && message !== null && "id" in message &&
      message.id === id
    ) {
      return { ...message };
    }
  }
  return undefined;
}

/** The text blocks of an MCP tool result, one per line. */
export function textOf(result: Record<string, unknown>): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  return blocks.map((block) =>
    typeof block === "object" && block !== null && "text" in block
      ? String(block.text)
      : ""
  ).join("\n");
}

/**
 * A daemon's /health where every server runs or waits for its first use
 * (`not_loaded`: `serve` loads servers then), except desktop-control on a
 * machine without an X display (its error, said before it loads too, makes
 * the daemon "degraded").
 */
export function assertRunningExceptDisplay(health: unknown): void {
  const body = typeof health === "object" && health !== null ? health : {};
  const status = "status" in body ? body.status : undefined;
  const servers = "servers" in body && typeof body.servers === "object" &&
      body.servers !== null
    ? body.servers
    : {};
  let degraded = false;
  for (const [id, server] of Object.entries(servers)) {
    const phase = typeof server === "object" && server !== null &&
        "phase" in server
      ? server.phase
      : undefined;
    const error = typeof server === "object" && server !== null &&
        "error" in server && typeof server.error === "string"
      ? server.error
      : "";
    if (phase === "running" || (phase === "not_loaded" && error === "")) {
      continue;
    }
    if (
      id === "desktop-control" &&
      (phase === "error" || phase === "not_loaded") &&
      /DISPLAY|X display/.test(error)
    ) {
      degraded = true;
      continue;
    }
    throw new Error(`server ${id} is ${String(phase)}: ${error}`);
  }
  const expected = degraded ? "degraded" : "ok";
  if (status !== expected) {
    throw new Error(`daemon status ${String(status)}, expected ${expected}`);
  }
}
