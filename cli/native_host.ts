// `agentd native-host`: the process the browser starts for the companion
// extension (chrome.runtime.connectNative). It speaks the browser's framing
// on stdin/stdout and relays every message to the running daemon's relay
// (address and pairing token from the data dir), reconnecting when the
// daemon restarts. `agentd native-host install` is in native_host_install.ts.

import {
  commonFlags,
  FIRST_STEPS,
  flagsHelp,
  parseFlags,
  UsageError,
} from "./args.ts";
import { loadSettings } from "./boot.ts";
import type { CliContext } from "./context.ts";
import { runNativeHostInstall } from "./native_host_install.ts";
import { messageOf } from "../platform/errors.ts";
import { createLogger, type Logger } from "../platform/log.ts";
import {
  FrameReader,
  FrameWriter,
  HOST_TO_BROWSER_MAX,
  isRelayAddress,
  relayFiles,
} from "../platform/native_messaging.ts";
import { InPageConfig } from "../tools/in-page/config.ts";

export const NATIVE_HOST_HELP = `Usage: agentd native-host [install] [flags]

Without a subcommand: the native messaging host. The browser starts it when
the agentd extension connects; it relays the extension's messages to the
running daemon (agentd serve, or agentd mcp in-page) over loopback, paired by
the token in <data dir>/in-page/pairing_token. Not meant to be run by hand.

  agentd native-host install    Register the host with Chrome, Chromium,
                                Edge and Brave (see --help there)

Flags:
${flagsHelp(commonFlags)}

${FIRST_STEPS}`;

const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2_000;

export async function runNativeHost(
  args: string[],
  ctx: CliContext,
): Promise<number> {
  if (args[0] === "install") {
    return await runNativeHostInstall(args.slice(1), ctx);
  }
  // Chrome on Windows adds --parent-window=<handle>; it means nothing to us.
  const own = args.filter((arg) => !arg.startsWith("--parent-window="));
  const { values, positionals } = parseFlags("native-host", own, commonFlags);
  if (values.help === true) {
    ctx.print(NATIVE_HOST_HELP);
    return 0;
  }
  const [origin = "", ...extra] = positionals;
  if (
    extra.length > 0 ||
    (origin !== "" && !origin.startsWith("chrome-extension://"))
  ) {
    throw new UsageError(
      `unexpected argument "${
        extra[0] ?? origin
      }" for "agentd native-host" (did you mean "install"?)`,
      "native-host",
    );
  }
  const flags: Record<string, unknown> = {};
  if (typeof values["data-dir"] === "string") {
    flags.data_dir = values["data-dir"];
  }
  if (typeof values.config === "string") flags.config = values.config;
  if (typeof values["log-level"] === "string") {
    flags.log_level = values["log-level"];
  }
  const settings = await loadSettings({
    flags,
    specs: await ctx.servers.load(),
    env: ctx.env,
  });
  const log = createLogger({ level: settings.base.log_level }).child({
    component: "native-host",
  });
  const section = settings.values["in-page"];
  const config = InPageConfig.parse(
    typeof section === "object" && section !== null ? section : {},
  );
  const id = origin.match(/^chrome-extension:\/\/([a-p]{32})\/?$/)?.[1];
  if (!id || !config.extension_ids.includes(id)) {
    // The manifest's allowed_origins is the browser's check; this is ours.
    log.error("native_host_refused", {
      origin: origin || null,
      allowed: config.extension_ids,
      reason: "caller is not the agentd extension",
    });
    return 1;
  }
  await relay(origin, settings.dataDir, log);
  return 0;
}

interface DaemonLink {
  writer: FrameWriter;
  conn: Deno.Conn;
}

/** Relays until the browser closes stdin. */
async function relay(
  origin: string,
  dataDir: string,
  log: Logger,
): Promise<void> {
  const browserIn = new FrameReader(Deno.stdin.readable);
  const browserOut = new FrameWriter(Deno.stdout.writable, HOST_TO_BROWSER_MAX);
  let daemon: DaemonLink | undefined;
  let done = false;
  const toBrowser = (message: unknown) =>
    browserOut.write(message).catch((error) =>
      log.warn("native_host_write_failed", { error: messageOf(error) })
    );

  const linkLoop = (async () => {
    let delay = RETRY_FIRST_MS;
    let announced = false;
    while (!done) {
      const link = await pair(origin, dataDir).catch((error) => {
        if (!announced) {
          log.info("daemon_unreachable", { reason: messageOf(error) });
          announced = true;
        }
        return undefined;
      });
      if (!link) {
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, RETRY_MAX_MS);
        continue;
      }
      delay = RETRY_FIRST_MS;
      announced = false;
      daemon = { writer: link.writer, conn: link.conn };
      log.info("daemon_paired", { port: link.port });
      await toBrowser({ type: "daemon", state: "connected" });
      try {
        for (;;) {
          const message = await link.reader.read();
          if (message === undefined) break;
          await toBrowser(message);
        }
      } catch (error) {
        log.warn("daemon_read_failed", { error: messageOf(error) });
      }
      daemon = undefined;
      try {
        link.conn.close();
      } catch {
        // already closed
      }
      if (!done) {
        log.info("daemon_lost");
        await toBrowser({ type: "daemon", state: "disconnected" });
      }
    }
  })();

  try {
    for (;;) {
      const message = await browserIn.read();
      if (message === undefined) break;
      const link = daemon;
      if (!link) continue; // nobody to tell; the extension re-sends hello on "connected"
      await link.writer.write(message).catch((error) =>
        log.warn("daemon_write_failed", { error: messageOf(error) })
      );
    }
  } catch (error) {
    log.warn("browser_read_failed", { error: messageOf(error) });
  } finally {
    done = true;
    const link = daemon;
    if (link) {
      try {
        link.conn.close();
      } catch {
        // already closed
      }
    }
    log.info("native_host_exit", { reason: "browser closed the port" });
  }
  await Promise.race([
    linkLoop,
    new Promise((resolve) => setTimeout(resolve, 500)),
  ]);
}

/** Connects to the daemon's relay and presents the pairing token. */
async function pair(origin: string, dataDir: string): Promise<
  { reader: FrameReader; writer: FrameWriter; conn: Deno.Conn; port: number }
> {
  const files = relayFiles(dataDir);
  const address: unknown = JSON.parse(await Deno.readTextFile(files.address));
  if (!isRelayAddress(address)) {
    throw new Error(`${files.address} is not a relay address`);
  }
  const token = (await Deno.readTextFile(files.token)).trim();
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: address.port,
  });
  const reader = new FrameReader(conn.readable);
  const writer = new FrameWriter(conn.writable);
  try {
    await writer.write({ type: "pair", token, origin, host_pid: Deno.pid });
    const answer: unknown = await reader.read();
    if (
      typeof answer !== "object" || answer === null || !("type" in answer) ||
      answer.type !== "paired"
    ) {
      const reason =
        typeof answer === "object" && answer !== null && "reason" in answer
          ? String(answer.reason)
          : "no answer";
      throw new Error(`the daemon refused pairing: ${reason}`);
    }
  } catch (error) {
    conn.close();
    throw error;
  }
  return { reader, writer, conn, port: address.port };
}
