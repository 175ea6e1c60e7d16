// `agentd ui`: the dashboard in a native window. Finds the daemon of this
// config (or starts one), logs in with a one-time code (never the token in a
// URL), and opens /dashboard in a webview process of its own; without a
// display or the webview library, opens the default browser instead.

import { dirname, join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { existsSync } from "node:fs";
import { libraryPath, systemHint } from "../ffi/webview.ts";
import { openWindow, UNAVAILABLE_MARK } from "./ui_window.ts";
import type { BaseConfig } from "../platform/config.ts";
import { messageOf } from "../platform/errors.ts";
import type { Logger } from "../platform/log.ts";
import {
  configKey,
  FIRST_STEPS,
  type FlagSet,
  flagsHelp,
  parseFlags,
  serveFlags,
  UsageError,
} from "./args.ts";
import {
  createDaemonLogger,
  loadSettings,
  shutdownSignal,
  StartupError,
} from "./boot.ts";
import type { CliContext } from "./context.ts";

export const uiFlags: FlagSet = {
  browser: {
    type: "boolean",
    help: "Open the default browser instead of a native window",
  },
  ...serveFlags,
};

export const UI_HELP = `Usage: agentd ui [flags]

Opens the dashboard (servers, gateway, agents and chat, runs, memory) in a
native window. Uses the daemon already running for this config (same host,
port and token), or starts one that stops when the window closes. Logs in
with a one-time code, so no token appears in any URL.

Without a display or the webview library (Debian: libwebkitgtk-6.0-4), or
with --browser, opens the default browser (xdg-open, open, start) instead.

Flags:
${flagsHelp(uiFlags)}

${FIRST_STEPS}`;

const DAEMON_READY_MS = 60_000;

/**
 * The first argument of the window process `agentd ui` starts (not a flag a
 * person gives): a compiled agentd has no script to `deno run`, so the window
 * is this same command in both modes.
 */
const WINDOW_PROCESS = "--window-process";

export async function runUi(args: string[], ctx: CliContext): Promise<number> {
  if (args[0] === WINDOW_PROCESS) {
    const [url, title = "agentd"] = args.slice(1);
    if (url === undefined) throw new UsageError("no URL for the window", "ui");
    return openWindow(url, title);
  }
  const { values, positionals } = parseFlags("ui", args, uiFlags);
  if (values.help === true) {
    ctx.print(UI_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `unexpected argument "${positionals[0]}" for "agentd ui"`,
      "ui",
    );
  }
  const flags: Record<string, unknown> = {};
  const serveArgs: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    if (name === "help" || name === "browser") continue;
    flags[configKey(name)] = value;
    serveArgs.push(
      ...(value === true ? [`--${name}`] : [`--${name}`, String(value)]),
    );
  }
  const settings = await loadSettings({
    flags,
    specs: await ctx.servers.load(),
    env: ctx.env,
  });
  const base = settings.base;
  const log = createDaemonLogger(base);
  const signal = shutdownSignal(log);
  let url = daemonUrl(base);
  let daemon: Deno.ChildProcess | undefined;
  let daemonLog: Promise<void> | undefined;
  try {
    // Port 0 names no daemon to find: it asks for a new one on a free port.
    if (base.port === 0 || !(await isAgentd(url, base.token))) {
      ctx.print(
        base.port === 0
          ? "agentd ui: --port 0: starting a daemon on a free port"
          : `agentd ui: no daemon at ${url}; starting one`,
      );
      daemon = spawnAgentd(["serve", ...serveArgs]);
      const followed = followDaemon(daemon);
      daemonLog = followed.done;
      url = await waitForDaemon(base, followed.listening, daemon);
    }
    const login = `${url}${await loginPath(url, base.token)}`;
    const reason = values.browser === true
      ? "--browser was given"
      : windowUnavailable(ctx.env);
    if (reason === undefined) {
      const window = spawnAgentd([
        "ui",
        WINDOW_PROCESS,
        login,
        `agentd dashboard — ${url}`,
      ]);
      const output = forwardOutput(window, log);
      const ended = await Promise.race([
        window.status.then((status) => ({ status })),
        signal.received.then((received) => ({ received })),
      ]);
      if ("received" in ended) {
        stop(window, "SIGTERM");
        await window.status;
      } else if (ended.status.code === 3) {
        const why = (await output).find((line) =>
          line.startsWith(UNAVAILABLE_MARK)
        )?.slice(UNAVAILABLE_MARK.length) ?? "the window could not open";
        await openInBrowser(login, why, ctx);
        if (daemon) await untilSignal(ctx, signal);
      } else {
        log.info("window_closed", { code: ended.status.code });
      }
      await output;
    } else {
      await openInBrowser(login, reason, ctx);
      if (daemon) await untilSignal(ctx, signal);
    }
    return 0;
  } finally {
    if (daemon) {
      stop(daemon, "SIGTERM");
      await daemon.status;
      await daemonLog;
    }
    signal.dispose();
  }
}

/** The address to reach the daemon of `base` on this machine. */
export function daemonUrl(base: BaseConfig): string {
  const host =
    base.host === "0.0.0.0" || base.host === "::" || base.host === "[::]"
      ? "127.0.0.1"
      : base.host.includes(":") && !base.host.startsWith("[")
      ? `[${base.host}]`
      : base.host;
  return `http://${host}:${base.port}`;
}

/** Whether agentd answers at `url`; a daemon refusing this config's token is an error. */
async function isAgentd(
  url: string,
  token: string | undefined,
): Promise<boolean> {
  let response: Response;
  try {
    response = await fetch(`${url}/health`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(2_000),
    });
  } catch {
    return false;
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (response.status === 401) {
    throw new StartupError(
      `a daemon at ${url} refuses this config's token: set AGENTD_TOKEN (or token_file) to the daemon's token`,
    );
  }
  return typeof body === "object" && body !== null && "servers" in body &&
    "version" in body;
}

/**
 * The started daemon's address, once it answers there: its port comes from
 * its `listening` log line, since `--port 0` lets the system choose one.
 */
async function waitForDaemon(
  base: BaseConfig,
  listening: Promise<number | undefined>,
  daemon: Deno.ChildProcess,
): Promise<string> {
  let exited: Deno.CommandStatus | undefined;
  void daemon.status.then((status) => exited = status);
  const deadline = Date.now() + DAEMON_READY_MS;
  const expected = daemonUrl(base);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), DAEMON_READY_MS);
  });
  const port = await Promise.race([listening, timeout]).finally(() =>
    clearTimeout(timer)
  );
  if (port === "timeout") {
    throw new StartupError(
      `the daemon did not start listening within ${
        DAEMON_READY_MS / 1000
      } s (expected at ${expected})`,
    );
  }
  if (port === undefined) {
    const code = (await daemon.status).code;
    throw new StartupError(
      `the daemon exited with code ${code} before listening (expected at ${expected}); see its log above`,
    );
  }
  const url = daemonUrl({ ...base, port });
  while (Date.now() < deadline) {
    if (exited) {
      throw new StartupError(
        `the daemon exited with code ${exited.code} before answering at ${url}; see its log above`,
      );
    }
    if (await isAgentd(url, base.token)) return url;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new StartupError(
    `the daemon did not answer at ${url} within ${DAEMON_READY_MS / 1000} s`,
  );
}

/**
 * Passes the started daemon's log through to this process's stderr, and
 * reads the port of its `listening` line (undefined if it ends without one).
 */
function followDaemon(
  daemon: Deno.ChildProcess,
): { listening: Promise<number | undefined>; done: Promise<void> } {
  const { promise: listening, resolve } = Promise.withResolvers<
    number | undefined
  >();
  const encoder = new TextEncoder();
  const done = (async () => {
    let rest = "";
    for await (
      const chunk of daemon.stderr.pipeThrough(new TextDecoderStream())
    ) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const line of parts) {
        await Deno.stderr.write(encoder.encode(`${line}\n`));
        const port = listeningPort(line);
        if (port !== undefined) resolve(port);
      }
    }
    if (rest !== "") await Deno.stderr.write(encoder.encode(rest));
    resolve(undefined);
  })();
  return { listening, done };
}

/** The port of a `listening` log line; undefined for any other line. */
function listeningPort(line: string): number | undefined {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (
    typeof entry === "object" && entry !== null && "event" in entry &&
    entry.event === "listening" && "port" in entry &&
    typeof entry.port === "number"
  ) return entry.port;
  return undefined;
}

/** A one-time login path from the daemon, asked for with the daemon token. */
async function loginPath(
  url: string,
  token: string | undefined,
): Promise<string> {
  const response = await fetch(`${url}/dashboard/login-codes`, {
    method: "POST",
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const body: unknown = await response.json().catch(() => undefined);
  if (
    response.status === 201 && typeof body === "object" && body !== null &&
    "login_path" in body && typeof body.login_path === "string"
  ) return body.login_path;
  throw new StartupError(
    response.status === 401
      ? `the daemon at ${url} refused this config's token (set AGENTD_TOKEN or token_file to the daemon's token)`
      : `the daemon at ${url} gave no login code (HTTP ${response.status}); is it an older agentd without /dashboard?`,
  );
}

/**
 * Why no native window can open here, or undefined when one may. Loading
 * the library is left to the window process: GTK must not be loaded (and
 * unloaded) in this one.
 */
export function windowUnavailable(
  env: Record<string, string>,
): string | undefined {
  const os = Deno.build.os;
  if (
    os !== "darwin" && os !== "windows" && !env.DISPLAY && !env.WAYLAND_DISPLAY
  ) {
    return "no display (DISPLAY and WAYLAND_DISPLAY are unset)";
  }
  try {
    Deno.statSync(libraryPath(env));
    return undefined;
  } catch (error) {
    return `cannot load the webview library ${libraryPath(env)}: ${
      messageOf(error)
    }; ${systemHint()}`;
  }
}

async function openInBrowser(
  url: string,
  reason: string,
  ctx: CliContext,
): Promise<void> {
  const path = new URL(url).pathname;
  const [command, ...args] = Deno.build.os === "darwin"
    ? ["open", url]
    : Deno.build.os === "windows"
    ? ["cmd", "/c", "start", "", url]
    : ["xdg-open", url];
  ctx.print(
    `agentd ui: no native window: ${reason}.\nOpening the dashboard in your browser (${path}, a one-time login).`,
  );
  try {
    const status = await new Deno.Command(command, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    if (!status.success) {
      throw new Error(`${command} exited with code ${status.code}`);
    }
  } catch (error) {
    ctx.print(
      `agentd ui: could not start ${command} (${
        messageOf(error)
      }); open ${url} yourself within 60 s.`,
    );
  }
}

async function untilSignal(
  ctx: CliContext,
  signal: { received: Promise<unknown> },
): Promise<void> {
  ctx.print(
    "agentd ui: the daemon started for the dashboard runs until you press Ctrl-C.",
  );
  await signal.received;
}

/**
 * This same agentd as a child with `args`: the binary itself when compiled,
 * else `deno run -A [--config …] <main> <args>`.
 */
function spawnAgentd(args: string[]): Deno.ChildProcess {
  const main = fromFileUrl(Deno.mainModule);
  const config = denoConfigFor(dirname(main));
  return new Deno.Command(Deno.execPath(), {
    args: Deno.build.standalone ? args : [
      "run",
      "-A",
      ...(config ? ["--config", config] : []),
      main,
      ...args,
    ],
    stdin: "null",
    stdout: "null",
    // Piped: the window's chatter becomes debug lines; the daemon's log is
    // passed through and its `listening` line read.
    stderr: "piped",
  }).spawn();
}

/** The deno.json above `dir`, so the child gets the same imports and flags. */
function denoConfigFor(dir: string): string | undefined {
  for (let current = dir;; current = dirname(current)) {
    const candidate = join(current, "deno.json");
    if (existsSync(candidate)) return candidate;
    if (dirname(current) === current) return undefined;
  }
}

/** The window's stderr (GTK/WebKit chatter) as debug log lines; resolves with them. */
async function forwardOutput(
  child: Deno.ChildProcess,
  log: Logger,
): Promise<string[]> {
  const lines: string[] = [];
  const decoder = new TextDecoderStream();
  let rest = "";
  for await (const chunk of child.stderr.pipeThrough(decoder)) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop() ?? "";
    for (const line of parts) {
      if (line.trim() === "") continue;
      lines.push(line);
      log.debug("window_output", { line });
    }
  }
  if (rest.trim() !== "") lines.push(rest);
  return lines;
}

function stop(child: Deno.ChildProcess, signal: Deno.Signal): void {
  try {
    child.kill(signal);
  } catch {
    // already exited
  }
}
