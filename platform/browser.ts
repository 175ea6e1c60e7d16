// The Browser port: one CDP connection to Chromium or Chrome. It attaches to
// a browser already listening on the debugging port (the user's own, with its
// profile and sessions) or launches one with a persistent profile, and
// restarts it after a crash. Shared by the servers that drive a browser.
//
// A launched browser outlives a daemon killed with SIGKILL (it is not in the
// daemon's process group's fate). So a launch leaves a record in the profile
// (`agentd-browser.json`: the browser's and the daemon's process ids), and a
// later connection that finds that very browser on its port (its pid, asked
// over CDP) while the daemon that launched it is gone adopts it as launched:
// it keeps its tabs, and closes it at shutdown as its launcher would have.

import {
  BROWSER_NAMES,
  type DebuggingEndpoint,
  findBrowser,
  probeDebuggingPort,
} from "./browser_discovery.ts";
import { join } from "node:path";
import { messageOf } from "./errors.ts";
import { processAlive } from "../ffi/libc.ts";
import type { Logger } from "./log.ts";
import type { Browser } from "./puppeteer.ts";
import { lazy } from "./lazy.ts";
import type { JsonValue } from "./store/mod.ts";

export { findBrowser, probeDebuggingPort };

export type BrowserState =
  | "not_started"
  | "connecting"
  | "connected"
  | "disconnected"
  | "closed";

/** Whether this process started the browser (and so closes it) or found it running. */
export type BrowserMode = "launched" | "attached";

export interface BrowserOptions {
  /** The debugging port: attach when a browser listens there, else launch one with it. */
  cdpPort: number;
  /** Profile directory of a launched browser (created when missing). */
  profileDir: string;
  /** Executable to launch; default: the first Chromium or Chrome found (see findBrowser). */
  executable?: string;
  headless: boolean;
  /** Extra command-line flags for a launched browser. */
  args?: readonly string[];
  /** Viewport of pages in a launched browser; an attached browser keeps its windows. */
  viewport?: { width: number; height: number };
  /** Never launch: attach only, retrying with backoff until a browser listens (extension-bridge). */
  attachOnly?: boolean;
  /** Upper bound of any one CDP call. */
  protocolTimeoutMs?: number;
  /**
   * Runs on each new connection before anyone gets the browser (a guard
   * that must hold on every tab, such as browser-automation's worker fence).
   * When it fails, so does the connect: the browser is let go.
   */
  prepare?: (browser: Browser) => Promise<void>;
  log: Logger;
  env?: Readonly<Record<string, string>>;
  clock?: () => number;
}

/** Flags every launched browser gets; `--no-sandbox` is added when running as root. */
const LAUNCH_ARGS = [
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-dev-shm-usage",
];

/** The launch record in a launched browser's profile (see the top). */
const LAUNCH_RECORD = "agentd-browser.json";

interface LaunchRecord {
  browser_pid: number;
  daemon_pid: number;
  cdp_port: number;
  executable: string;
}

const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 30_000;
const CLOSE_TIMEOUT_MS = 10_000;

/**
 * The connection, with its state for /health. `browser()` connects on first
 * use (one attempt at a time); after an unexpected disconnect it reconnects
 * in the background with exponential backoff and runs the restart listeners
 * (which restore pages) before anyone gets the new browser.
 */
export class BrowserConnection {
  readonly #options: BrowserOptions;
  readonly #clock: () => number;
  readonly #restartListeners: ((browser: Browser) => Promise<void>)[] = [];
  #browser: Browser | undefined;
  #state: BrowserState = "not_started";
  #mode: BrowserMode | undefined;
  #version: string | undefined;
  #pid: number | undefined;
  #executable: string | undefined;
  #connecting: Promise<Browser> | undefined;
  #generation = 0;
  #restarts = 0;
  #lastRestart: string | undefined;
  #lastDisconnect: string | undefined;
  #lastError: string | undefined;
  #connectedSince: string | undefined;
  #reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  #reconnectDelay = 0;
  #nextAttemptAt: number | undefined;
  #everConnected = false;

  constructor(options: BrowserOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
  }

  get state(): BrowserState {
    return this.#state;
  }

  get mode(): BrowserMode | undefined {
    return this.#mode;
  }

  /** Counts connections made: a page of an older generation belongs to a browser that is gone. */
  get generation(): number {
    return this.#generation;
  }

  /** Read through a method: close() may change the state while a connect awaits. */
  #closed(): boolean {
    return this.#state === "closed";
  }

  get connected(): boolean {
    return this.#state === "connected" && this.#browser?.connected === true;
  }

  /** The launched browser's process id; undefined when attached. */
  get pid(): number | undefined {
    return this.#pid;
  }

  /** Runs after a reconnect that follows a disconnect, before callers get the browser. */
  onRestart(listener: (browser: Browser) => Promise<void>): void {
    this.#restartListeners.push(listener);
  }

  /** The connected browser: attaches or launches when there is none yet. */
  browser(): Promise<Browser> {
    if (this.#state === "closed") {
      return Promise.reject(new Error("The browser connection is closed"));
    }
    const current = this.#browser;
    if (current?.connected && this.#state === "connected") {
      return Promise.resolve(current);
    }
    return this.#connect(this.#options.attachOnly !== true);
  }

  #connect(mayLaunch: boolean): Promise<Browser> {
    this.#connecting ??= this.#open(mayLaunch).finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(mayLaunch: boolean): Promise<Browser> {
    const restart = this.#everConnected;
    this.#state = "connecting";
    const started = this.#clock();
    try {
      const endpoint = await probeDebuggingPort(this.#options.cdpPort);
      let browser: Browser;
      if (endpoint) {
        browser = await this.#attach(endpoint);
      } else if (mayLaunch) {
        browser = await this.#launch();
      } else {
        throw new Error(
          `no browser listens on port ${this.#options.cdpPort} yet`,
        );
      }
      if (this.#options.prepare) {
        try {
          await this.#options.prepare(browser);
        } catch (error) {
          await this.#release(browser);
          throw new Error(`Cannot prepare the browser: ${messageOf(error)}`, {
            cause: error,
          });
        }
      }
      if (this.#closed()) {
        await this.#release(browser);
        throw new Error("The browser connection was closed while connecting");
      }
      this.#browser = browser;
      this.#generation++;
      browser.once("disconnected", () => this.#disconnected(browser));
      this.#everConnected = true;
      this.#lastError = undefined;
      this.#reconnectDelay = 0;
      this.#connectedSince = new Date(this.#clock()).toISOString();
      if (restart) {
        this.#restarts++;
        this.#lastRestart = this.#connectedSince;
        for (const listener of this.#restartListeners) {
          await listener(browser).catch((error) =>
            this.#options.log.warn("browser_restore_failed", {
              error: messageOf(error),
            })
          );
        }
        if (this.#browser !== browser || !browser.connected) {
          throw new Error(
            "The browser went away again while its tabs were restored",
          );
        }
      }
      this.#state = "connected";
      this.#options.log.info(restart ? "browser_restarted" : "browser_ready", {
        mode: this.#mode,
        version: this.#version,
        pid: this.#pid,
        cdp_port: this.#options.cdpPort,
        duration_ms: Math.round(this.#clock() - started),
        restarts: this.#restarts,
      });
      return browser;
    } catch (error) {
      this.#lastError = messageOf(error);
      if (!this.#closed()) {
        const retry = this.#everConnected || this.#options.attachOnly === true;
        this.#state = retry ? "disconnected" : "not_started";
        if (retry) this.#scheduleReconnect();
      }
      throw error;
    }
  }

  async #attach(endpoint: DebuggingEndpoint): Promise<Browser> {
    try {
      const { puppeteer } = await loadPuppeteer();
      const browser = await puppeteer.connect({
        browserWSEndpoint: endpoint.webSocketDebuggerUrl,
        defaultViewport: null, // leave the user's windows as they are
        protocolTimeout: this.#options.protocolTimeoutMs,
      });
      this.#mode = "attached";
      this.#version = endpoint.browser;
      this.#pid = undefined;
      this.#executable = undefined;
      const orphan = await this.#orphanLaunched(browser);
      if (orphan !== undefined) {
        this.#mode = "launched";
        this.#pid = orphan.browser_pid;
        this.#executable = orphan.executable;
        this.#options.log.info("browser_adopted", {
          pid: orphan.browser_pid,
          launched_by: orphan.daemon_pid,
        });
      }
      return browser;
    } catch (error) {
      throw new Error(
        `Cannot attach to the browser on port ${this.#options.cdpPort}: ${
          messageOf(error)
        }`,
        { cause: error },
      );
    }
  }

  async #launch(): Promise<Browser> {
    const options = this.#options;
    const executable = options.executable ?? findBrowser(options.env);
    if (executable === undefined) {
      throw new Error(
        `No browser listens on port ${options.cdpPort} and none was found to launch ` +
          `(looked for ${
            BROWSER_NAMES.join(", ")
          } on PATH). Install Chromium ` +
          "(Debian: sudo apt-get install chromium), set `executable` in the " +
          "browser-automation config, or start your own browser with " +
          `--remote-debugging-port=${options.cdpPort}`,
      );
    }
    await Deno.mkdir(options.profileDir, { recursive: true });
    const root = Deno.build.os !== "windows" && Deno.uid() === 0;
    try {
      const { puppeteer } = await loadPuppeteer();
      const browser = await puppeteer.launch({
        executablePath: executable,
        headless: options.headless,
        userDataDir: options.profileDir,
        debuggingPort: options.cdpPort,
        args: [
          ...LAUNCH_ARGS,
          ...(root ? ["--no-sandbox"] : []),
          ...options.args ?? [],
        ],
        defaultViewport: options.viewport ?? null,
        protocolTimeout: options.protocolTimeoutMs,
        // agentd's own shutdown closes the browser; puppeteer must not trap signals.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      this.#mode = "launched";
      this.#version = await browser.version();
      this.#pid = browser.process()?.pid;
      this.#executable = executable;
      await this.#recordLaunch(executable);
      return browser;
    } catch (error) {
      const message = messageOf(error);
      const hint = /in use|ProcessSingleton|SingletonLock/i.test(message)
        ? `; another browser uses the profile ${options.profileDir}: close it, or pick another --profile`
        : "";
      throw new Error(
        `Cannot launch ${executable} (profile ${options.profileDir}, port ${options.cdpPort}): ${message}${hint}`,
        { cause: error },
      );
    }
  }

  /** Leaves the launch record (see the top); a browser without one is only never adopted. */
  async #recordLaunch(executable: string): Promise<void> {
    if (this.#pid === undefined) return;
    const record: LaunchRecord = {
      browser_pid: this.#pid,
      daemon_pid: Deno.pid,
      cdp_port: this.#options.cdpPort,
      executable,
    };
    await Deno.writeTextFile(
      join(this.#options.profileDir, LAUNCH_RECORD),
      JSON.stringify(record),
    ).catch((error) =>
      this.#options.log.warn("browser_launch_record_failed", {
        error: messageOf(error),
      })
    );
  }

  /**
   * The record of `browser` when a daemon now gone launched it on this
   * profile and port; undefined for any other browser (the user's, another
   * live daemon's), or when that cannot be told.
   */
  async #orphanLaunched(browser: Browser): Promise<LaunchRecord | undefined> {
    if (this.#options.attachOnly === true) return undefined; // never ours to close
    let record: Partial<LaunchRecord>;
    try {
      record = JSON.parse(
        await Deno.readTextFile(
          join(this.#options.profileDir, LAUNCH_RECORD),
        ),
      );
    } catch {
      return undefined;
    }
    const { browser_pid, daemon_pid, cdp_port, executable } = record;
    if (
      typeof browser_pid !== "number" || typeof daemon_pid !== "number" ||
      typeof executable !== "string" || cdp_port !== this.#options.cdpPort ||
      daemon_pid === Deno.pid || processAlive(daemon_pid) !== false
    ) return undefined;
    try {
      const session = await browser.target().createCDPSession();
      const { processInfo } = await session.send("SystemInfo.getProcessInfo");
      await session.detach().catch(() => undefined);
      const own = processInfo.find((process) => process.type === "browser");
      if (own?.id !== browser_pid) return undefined;
    } catch {
      return undefined;
    }
    return { browser_pid, daemon_pid, cdp_port, executable };
  }

  #disconnected(browser: Browser): void {
    if (browser !== this.#browser || this.#state === "closed") return;
    this.#browser = undefined;
    this.#state = "disconnected";
    this.#lastDisconnect = new Date(this.#clock()).toISOString();
    this.#options.log.warn("browser_disconnected", {
      mode: this.#mode,
      pid: this.#pid,
    });
    this.#scheduleReconnect();
  }

  /**
   * Background reconnect. A launched browser is relaunched at once; an
   * attached one is only re-attached (the user's browser is theirs to
   * restart), while a tool call may still launch one.
   */
  #scheduleReconnect(): void {
    if (this.#state === "closed" || this.#reconnectTimer !== undefined) return;
    const delay = this.#reconnectDelay;
    this.#reconnectDelay = Math.min(
      Math.max(delay * 2, RECONNECT_FIRST_MS),
      RECONNECT_MAX_MS,
    );
    this.#nextAttemptAt = this.#clock() + delay;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      this.#nextAttemptAt = undefined;
      if (this.#state !== "disconnected") return;
      // A failure logs and schedules the next attempt (in #open).
      const mayLaunch = this.#mode !== "attached" &&
        this.#options.attachOnly !== true;
      this.#connect(mayLaunch).catch((error) => {
        const fields = {
          error: messageOf(error),
          retry_in_ms: this.#reconnectDelay,
        };
        // Waiting for a browser that never came is routine (attach-only): debug, not warn.
        if (this.#everConnected) {
          this.#options.log.warn("browser_reconnect_failed", fields);
        } else this.#options.log.debug("browser_reconnect_failed", fields);
      });
    }, delay);
  }

  /** For /health. */
  status(): { [key: string]: JsonValue } {
    const status: { [key: string]: JsonValue } = {
      state: this.#state,
      mode: this.#mode ?? null,
      cdp_port: this.#options.cdpPort,
      version: this.#version ?? null,
      restarts: this.#restarts,
      last_restart: this.#lastRestart ?? null,
    };
    if (this.#mode === "launched") {
      status.pid = this.#pid ?? null;
      status.executable = this.#executable ?? null;
      status.profile_dir = this.#options.profileDir;
      status.headless = this.#options.headless;
    }
    if (this.#connectedSince) status.connected_since = this.#connectedSince;
    if (this.#lastDisconnect) status.last_disconnect = this.#lastDisconnect;
    if (this.#lastError) status.last_error = this.#lastError;
    if (this.#nextAttemptAt !== undefined) {
      status.next_attempt = new Date(this.#nextAttemptAt).toISOString();
    }
    return status;
  }

  /** Closes a launched browser, leaves an attached one running; no reconnect afterwards. */
  async close(): Promise<void> {
    if (this.#state === "closed") return;
    this.#state = "closed";
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    this.#nextAttemptAt = undefined;
    await this.#connecting?.catch(() => undefined);
    const browser = this.#browser;
    this.#browser = undefined;
    if (browser) await this.#release(browser);
  }

  async #release(browser: Browser): Promise<void> {
    if (this.#mode !== "launched") {
      await browser.disconnect().catch(() => undefined);
      return;
    }
    const process = browser.process();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const closed = await Promise.race([
      browser.close().then(() => true, () => false),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), CLOSE_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    if (!closed && process && process.exitCode === null) {
      this.#options.log.warn("browser_close_timeout", { pid: process.pid });
      process.kill("SIGKILL");
    } else if (!closed && !process && this.#pid !== undefined) {
      // Adopted: no child process handle, only its pid.
      this.#options.log.warn("browser_close_timeout", { pid: this.#pid });
      try {
        Deno.kill(this.#pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await Deno.remove(join(this.#options.profileDir, LAUNCH_RECORD)).catch(
      () => undefined,
    );
    this.#options.log.info("browser_closed", { pid: this.#pid });
  }
}

// puppeteer-core loads on the first launch or attach: an idle daemon that
// never starts a browser does not hold its module graph (bench/README.md).
function loadPuppeteer(): Promise<typeof import("./puppeteer.ts")> {
  return lazy("./puppeteer.ts", import.meta.url);
}
