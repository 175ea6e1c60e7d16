// The bridge's hold on the browser: one attach-only CDP connection (the
// shared Browser port), reconnected with backoff, and the CDP steps the tools
// share: a browser-level command, and code run in an extension's service
// worker (woken first when idle).

import { join } from "node:path";
import { BrowserConnection } from "../../platform/browser.ts";
import type { DaemonOrigin } from "../../platform/daemon_origin.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import type { Metric } from "../../platform/metrics.ts";
import type {
  Browser,
  CDPSession,
  Protocol,
} from "../../platform/puppeteer.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { ToolError } from "../kit/mod.ts";
import type { ExtensionBridgeConfig } from "./config.ts";
import { manifestAt, strings } from "./manifest.ts";

export const EXTENSION_ORIGIN = "chrome-extension://";

/** The extension id in a `chrome-extension://<id>/...` URL. */
export function extensionIdOf(url: string): string | undefined {
  const match = /^chrome-extension:\/\/([a-p]{32})\//.exec(url);
  return match?.[1];
}

export interface BridgeDeps {
  log: Logger;
  dataDir: string;
  env: Readonly<Record<string, string>>;
  /** The daemon's own origin: no tool reaches its pages or session cookie (platform/daemon_origin.ts). */
  ownOrigin: () => DaemonOrigin;
}

/** Rejects with a clear message when `promise` takes longer than `ms`. */
export async function bounded<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  promise.catch(() => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new ToolError(`${what} did not finish in ${ms} ms`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export class ExtensionBridge {
  readonly connection: BrowserConnection;
  readonly config: ExtensionBridgeConfig;
  readonly log: Logger;
  readonly ownOrigin: () => DaemonOrigin;
  readonly #tools = new Map<string, { calls: number; errors: number }>();
  #detectedCompanion: string | undefined;

  constructor(config: ExtensionBridgeConfig, deps: BridgeDeps) {
    this.config = config;
    this.log = deps.log;
    this.ownOrigin = deps.ownOrigin;
    this.connection = new BrowserConnection({
      cdpPort: config.cdp_port,
      attachOnly: true,
      // Unused: an attach-only connection never launches.
      profileDir: join(deps.dataDir, "profiles", "extension-bridge"),
      headless: true,
      protocolTimeoutMs: config.call_timeout_ms,
      log: deps.log,
      env: deps.env,
    });
  }

  /** The Start phase: attach now if a browser listens, else keep retrying in the background. */
  async start(): Promise<void> {
    await this.connection.browser().catch((error) =>
      this.log.warn("browser_not_reachable", {
        cdp_port: this.config.cdp_port,
        error: messageOf(error),
        next_attempt: this.connection.status().next_attempt ?? null,
      })
    );
  }

  /** The Shutdown phase: disconnect (the browser is the user's and keeps running). */
  async stop(): Promise<void> {
    await this.connection.close();
  }

  /** The connected browser, or a clear error at once while the connection is down. */
  async browser(): Promise<Browser> {
    const connection = this.connection;
    if (connection.connected || connection.state === "connecting") {
      return await bounded(
        connection.browser(),
        this.config.call_timeout_ms,
        `Connecting to the browser on CDP port ${this.config.cdp_port}`,
      );
    }
    const status = connection.status();
    const next = typeof status.next_attempt === "string"
      ? `; reconnecting with backoff, next attempt at ${status.next_attempt}`
      : "";
    const reason = typeof status.last_error === "string"
      ? ` (${status.last_error})`
      : "";
    throw new ToolError(
      `No browser connection on CDP port ${this.config.cdp_port}${reason}${next}. ` +
        `Start Chromium or Chrome with --remote-debugging-port=${this.config.cdp_port}; ` +
        "GET /health shows the connection state.",
    );
  }

  /** Runs one tool call, counting it (and its failure) for /health. */
  async counted<T>(tool: string, run: () => Promise<T>): Promise<T> {
    const counts = this.#tools.get(tool) ?? { calls: 0, errors: 0 };
    this.#tools.set(tool, counts);
    counts.calls++;
    try {
      return await run();
    } catch (error) {
      counts.errors++;
      if (error instanceof ToolError) throw error;
      throw new ToolError(`${tool} failed: ${messageOf(error)}`);
    }
  }

  /** A browser-level CDP command (the browser target's own session). */
  async send(
    browser: Browser,
    method: string,
    params: Record<string, unknown> = {},
  ): Promise<JsonValue> {
    const session = await browser.target().createCDPSession();
    try {
      return await bounded(
        sendRaw(session, method, params),
        this.config.call_timeout_ms,
        method,
      );
    } finally {
      await session.detach().catch(() => undefined);
    }
  }

  /** What the browser's Extensions domain lists (unpacked extensions); [] where unsupported. */
  async unpackedExtensions(
    browser: Browser,
  ): Promise<Protocol.Extensions.ExtensionInfo[]> {
    const session = await browser.target().createCDPSession();
    try {
      const { extensions } = await bounded(
        session.send("Extensions.getExtensions"),
        this.config.call_timeout_ms,
        "Extensions.getExtensions",
      );
      return extensions;
    } catch (error) {
      this.log.debug("extensions_domain_unavailable", {
        error: messageOf(error),
      });
      return [];
    } finally {
      await session.detach().catch(() => undefined);
    }
  }

  /** The running service worker target of an extension, if any. */
  workerTarget(browser: Browser, id: string) {
    return browser.targets().find((target) =>
      target.type() === "service_worker" &&
      target.url().startsWith(`${EXTENSION_ORIGIN}${id}/`)
    );
  }

  /**
   * The extension's service worker, started first when idle (Chromium stops
   * an idle one after ~30 s): `ServiceWorker.startWorker` on a page session.
   */
  async worker(browser: Browser, id: string) {
    const running = this.workerTarget(browser, id);
    if (running) return running;
    const known = (await this.unpackedExtensions(browser)).find((info) =>
      info.id === id
    );
    if (known?.enabled === false) {
      throw new ToolError(
        `Extension ${id} (${known.name}) is disabled: enable it first (set_enabled through the companion)`,
      );
    }
    const pages = await browser.pages();
    // A page session carries the ServiceWorker domain; open a tab only when there is none.
    const opened = pages[0] === undefined ? await browser.newPage() : undefined;
    const page = pages[0] ?? opened;
    if (page === undefined) throw new ToolError("The browser has no page");
    const session = await page.createCDPSession();
    try {
      await bounded(
        session.send("ServiceWorker.enable").then(() =>
          session.send("ServiceWorker.startWorker", {
            scopeURL: `${EXTENSION_ORIGIN}${id}/`,
          })
        ),
        this.config.call_timeout_ms,
        `Starting the service worker of extension ${id}`,
      );
    } catch (error) {
      throw new ToolError(
        `Extension ${id} has no service worker that can run: it is not installed, ` +
          `disabled, or has no background.service_worker (${messageOf(error)})`,
      );
    } finally {
      await session.detach().catch(() => undefined);
      await opened?.close().catch(() => undefined);
    }
    try {
      return await browser.waitForTarget(
        (target) =>
          target.type() === "service_worker" &&
          target.url().startsWith(`${EXTENSION_ORIGIN}${id}/`),
        { timeout: this.config.call_timeout_ms },
      );
    } catch {
      throw new ToolError(
        `The service worker of extension ${id} did not start in ${this.config.call_timeout_ms} ms`,
      );
    }
  }

  /**
   * Calls `fn` (JavaScript source of a one-argument function) in the
   * extension's service worker with `arg`, and returns its JSON result. The
   * argument travels as JSON, never as code.
   */
  async evaluate(
    browser: Browser,
    id: string,
    fn: string,
    arg: JsonValue,
  ): Promise<JsonValue> {
    const target = await this.worker(browser, id);
    const session = await target.createCDPSession();
    try {
      const reply = await bounded(
        session.send("Runtime.evaluate", {
          expression: `(${fn})(${JSON.stringify(arg)})`,
          awaitPromise: true,
          returnByValue: true,
        }),
        this.config.call_timeout_ms,
        `Running in extension ${id}`,
      );
      if (reply.exceptionDetails) {
        const detail = reply.exceptionDetails.exception?.description ??
          reply.exceptionDetails.text;
        throw new ToolError(
          `In extension ${id}: ${
            detail.split("\n")[0].replace(/^Error: /, "")
          }`,
        );
      }
      return toJson(reply.result.value);
    } finally {
      await session.detach().catch(() => undefined);
    }
  }

  /**
   * The extension whose chrome.management lists the others: the configured
   * one, else the first running service worker that has the API.
   */
  async companion(browser: Browser): Promise<string | undefined> {
    if (this.config.companion_id) return this.config.companion_id;
    const cached = this.#detectedCompanion;
    if (cached && this.workerTarget(browser, cached)) return cached;
    // Running workers first; then enabled unpacked ones whose manifest asks for management (woken).
    const requested: string[] = [];
    for (const info of await this.unpackedExtensions(browser)) {
      const manifest = info.enabled ? await manifestAt(info.path) : undefined;
      if (strings(manifest?.permissions).includes("management")) {
        requested.push(info.id);
      }
    }
    const candidates = [
      ...(cached ? [cached] : []),
      ...browser.targets().filter((target) =>
        target.type() === "service_worker"
      ).map((target) => extensionIdOf(target.url())),
      ...requested,
    ];
    for (const id of new Set(candidates)) {
      if (id === undefined) continue;
      const has = await this.evaluate(
        browser,
        id,
        "() => typeof chrome.management?.getAll === 'function'",
        null,
      ).catch(() => false);
      if (has === true) {
        this.#detectedCompanion = id;
        return id;
      }
    }
    return undefined;
  }

  /** For /health: the connection, reconnect timing, and calls per tool. */
  health(): { [key: string]: JsonValue } {
    const status = this.connection.status();
    const connected = this.connection.connected;
    const connection = connected
      ? "connected"
      : this.connection.state === "closed"
      ? "closed"
      : this.connection.state === "connecting"
      ? "connecting"
      : "reconnecting";
    const tools: { [key: string]: JsonValue } = {};
    for (const [name, counts] of this.#tools) tools[name] = { ...counts };
    // Before any browser connected the bridge waits for the user's browser;
    // losing one that was connected is a degradation.
    const lost = "connected_since" in status;
    const port = status.cdp_port;
    const lastError = typeof status.last_error === "string"
      ? `: ${status.last_error}`
      : "";
    return {
      status: connected ? "ok" : lost ? "degraded" : "waiting",
      // The dashboard's one line for this server: is the user's browser there.
      summary: connected
        ? `browser connected on port ${port}`
        : lost
        ? `browser connection lost, ${connection}${lastError}`
        : `waiting for a browser on port ${port}`,
      browser: { ...status, connected, connection },
      companion_id: this.config.companion_id ?? this.#detectedCompanion ??
        null,
      cdp_allow: [...this.config.cdp_allow],
      tools,
    };
  }

  metrics(): Metric[] {
    return [
      {
        name: "agentd_extension_bridge_connected",
        help:
          "1 while the extension bridge holds a CDP connection to the browser",
        type: "gauge",
        samples: [{ value: this.connection.connected ? 1 : 0 }],
      },
      {
        name: "agentd_extension_bridge_reconnects_total",
        help: "Reconnections to the browser after it went away",
        type: "counter",
        samples: [{
          value: Number(this.connection.status().restarts ?? 0),
        }],
      },
    ];
  }
}

/** A CDP value as JSON (returnByValue already made it plain data). */
export function toJson(value: unknown): JsonValue {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value));
}

/** A command by name: the allow-list decides which names reach here. */
async function sendRaw(
  session: CDPSession,
  method: string,
  params: Record<string, unknown>,
): Promise<JsonValue> {
  // The session's typed send keys on known names; a configured name is only known at run time.
  const send = session.send.bind(session) as (
    method: string,
    params: Record<string, unknown>,
  ) => Promise<unknown>;
  return toJson(await send(method, params));
}
