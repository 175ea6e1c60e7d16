// The handler context: the browser connection, the session tabs, and `act`,
// which runs one tool step on the caller's tab under its lock, logs it with
// the page before and after, retries once on a browser that restarted under
// it, and turns failures into errors with a screenshot.

import {
  type DaemonOrigin,
  daemonPageRefusal,
  reachesDaemon,
} from "../../platform/daemon_origin.ts";
import { join } from "node:path";
import { BrowserConnection } from "../../platform/browser.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import { LatencyWindow, type Metric } from "../../platform/metrics.ts";
import type { Page } from "../../platform/puppeteer.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import {
  type CallContext,
  imageBlock,
  ToolError,
  type ToolResult,
} from "../kit/mod.ts";
import type { BrowserAutomationConfig } from "./config.ts";
import { type PageState, pageState, reasonOf, within } from "./page_ops.ts";
import {
  type Fenced,
  fenceOwnOrigin,
  fenceWorkers,
} from "./own_origin_fence.ts";
import { Pages, type PageSlot, sessionKey } from "./pages.ts";
import { RESULT_PREFIX, SessionResults } from "./results.ts";

/** The longest wait_for timeout accepted. */
export const WAIT_FOR_MAX_MS = 300_000;

export interface Step {
  /** The tool's name, first word of every error. */
  tool: string;
  /** Safe to log (selectors, URLs; never typed text, values or scripts). */
  log?: Record<string, JsonValue>;
  /** Reads only: safe to run again when a navigation interrupted it. */
  readOnly?: boolean;
  /**
   * Neither reads nor scripts the tab's current document (navigate replaces
   * it; get_cookies reads the profile): allowed on a tab at agentd's own
   * origin, which every other step refuses.
   */
  leavesPage?: boolean;
}

/** A step refused because of agentd's own origin: nothing ran, so no screenshot either. */
export class OwnPageRefused extends ToolError {
  constructor(what: string, url: string, hint = "") {
    super(`${daemonPageRefusal(what, url)}${hint}`);
  }
}

/** The page navigated while a script ran in it (a load in progress, a redirect). */
const NAVIGATED =
  /Execution context was destroyed|Cannot find context with specified id/i;
const NAVIGATION_RETRIES = 2;

/** Requests to agentd's own origin kept per tab until the next step reads them. */
const FENCED_KEPT = 20;

/** Messages that mean the browser (not the page) went away under a call. */
const CONNECTION_LOST =
  /Target closed|Session closed|Connection closed|detached Frame|browser has disconnected|Navigating frame was detached|WebSocket is not open/i;

export class BrowserAutomation {
  readonly config: BrowserAutomationConfig;
  readonly connection: BrowserConnection;
  readonly pages: Pages;
  /** Big results of each session, served as MCP resources. */
  readonly results: SessionResults;
  /** Where screenshot may write; the first is where relative paths go. */
  readonly screenshotDirs: string[];
  readonly #log: Logger;
  /** The daemon's own origin: its session cookie is never returned (platform/daemon_origin.ts). */
  readonly ownOrigin: () => DaemonOrigin;
  readonly #defaultScreenshotDir: string;
  #actions = 0;
  #failures = 0;
  #retries = 0;
  readonly #actionMs = new LatencyWindow(256);
  readonly #loadMs = new LatencyWindow(256);
  #lastLoad: { url: string; ms: number } | undefined;
  /** What each tab's fence stopped since its last step (own_origin_fence.ts). */
  readonly #fenced = new WeakMap<Page, Fenced[]>();

  constructor(
    config: BrowserAutomationConfig,
    options: {
      log: Logger;
      dataDir: string;
      env: Readonly<Record<string, string>>;
      ownOrigin?: () => DaemonOrigin;
    },
  ) {
    this.config = config;
    this.#log = options.log;
    this.ownOrigin = options.ownOrigin ?? (() => ({ ports: [], hosts: [] }));
    this.#defaultScreenshotDir = join(options.dataDir, "screenshots");
    this.screenshotDirs = config.screenshot_dirs ??
      [this.#defaultScreenshotDir];
    this.connection = new BrowserConnection({
      cdpPort: config.cdp_port,
      profileDir: join(options.dataDir, "profiles", config.profile),
      executable: config.executable,
      headless: config.headless,
      args: config.args,
      viewport: {
        width: config.viewport_width,
        height: config.viewport_height,
      },
      // A backstop above every timeout a tool takes (wait_for's included).
      protocolTimeoutMs: Math.max(config.action_timeout_ms, WAIT_FOR_MAX_MS) +
        5_000,
      // Workers outlive the tabs that start them: fenced browser-wide, from the first line.
      prepare: (browser) =>
        fenceWorkers(
          browser,
          this.ownOrigin,
          (worker) =>
            options.log.warn(
              worker.stopped ? "worker_stopped" : "worker_fenced",
              { worker_origin: worker.workerOrigin, worker_type: worker.type },
            ),
        ),
      log: options.log,
      env: options.env,
    });
    this.results = new SessionResults(
      RESULT_PREFIX,
      config.results_max_bytes,
    );
    this.pages = new Pages({
      forgotten: (key) => this.results.forget(key),
      connection: this.connection,
      log: options.log,
      maxPages: config.max_pages,
      idleMs: config.page_idle_ms,
      navigationTimeoutMs: config.action_timeout_ms,
      ownPage: (url) => this.isOwnPage(url),
      setup: async (page) => {
        page.setDefaultTimeout(config.action_timeout_ms);
        page.setDefaultNavigationTimeout(config.action_timeout_ms);
        // A background tab (an attached browser's, the user's own in front)
        // draws no frames, so a click waits forever for the element to show
        // in view; focus emulation keeps it drawing without taking the front.
        await page.emulateFocusedPage(true);
        const fenced: Fenced[] = [];
        this.#fenced.set(page, fenced);
        await fenceOwnOrigin(page, this.ownOrigin, (request) => {
          if (fenced.length < FENCED_KEPT) fenced.push(request);
        });
      },
    });
  }

  /** The Start phase: attach or launch now when `launch_on_start`, else on first use. */
  async start(): Promise<void> {
    if (!this.config.launch_on_start) return;
    await this.connection.browser().catch((error) =>
      // The server still starts; /health says why and the next call retries.
      this.#log.error("browser_start_failed", { error: messageOf(error) })
    );
  }

  /** The default screenshot directory exists once anything may be written there. */
  async ensureScreenshotDir(): Promise<void> {
    if (this.screenshotDirs.includes(this.#defaultScreenshotDir)) {
      await Deno.mkdir(this.#defaultScreenshotDir, { recursive: true });
    }
  }

  /** Whether a URL is on agentd's own origin (platform/daemon_origin.ts). */
  isOwnPage(url: string): boolean {
    return reachesDaemon(url, this.ownOrigin());
  }

  recordPageLoad(url: string, ms: number): void {
    this.#loadMs.observe(ms);
    this.#lastLoad = { url, ms: Math.round(ms) };
  }

  /** Runs `run` on the caller's tab; see the file comment. */
  async act(
    call: CallContext,
    step: Step,
    run: (page: Page, slot: PageSlot) => Promise<ToolResult>,
  ): Promise<ToolResult> {
    return await this.pages.withSlot(sessionKey(call), async (slot) => {
      const started = performance.now();
      let before: PageState | undefined;
      try {
        let page = await this.pages.open(slot);
        // What the page tried between calls was stopped; the caller hears of it.
        this.#fencedDocument(page, slot, false);
        const generation = this.connection.generation;
        // Attached to the user's browser, the tab may be on agentd's own
        // origin, whose pages carry the operator's session: no tool reads or
        // scripts one, for any caller (platform/daemon_origin.ts).
        const wasOwn = this.isOwnPage(page.url());
        if (wasOwn && !step.leavesPage) {
          throw new OwnPageRefused(
            "this tab",
            page.url(),
            " Navigate it elsewhere first.",
          );
        }
        before = await pageState(page);
        const navigations = slot.navigations;
        let result: ToolResult;
        try {
          result = await this.#runSettled(step, page, () => run(page, slot));
        } catch (error) {
          if (!await this.#browserLost(generation, error)) throw error;
          this.#retries++;
          this.#log.warn("browser_action_retry", {
            tool: step.tool,
            session: slot.key,
            error: reasonOf(error),
          });
          page = await this.pages.open(slot);
          result = await run(page, slot);
        }
        const fenced = this.#fencedDocument(page, slot);
        if (fenced) throw fenced;
        if (
          this.isOwnPage(page.url()) &&
          (!wasOwn || slot.navigations !== navigations)
        ) {
          // It got there during the call (a redirect, a link): what the
          // step saw there is withheld.
          throw new OwnPageRefused("the page the tab reached", page.url());
        }
        const after = await pageState(page);
        this.#record(step, slot, started, before, after);
        return withNotes(result, slot);
      } catch (error) {
        // A step the fence cut short (a redirect onto the daemon) fails as
        // refused, not with the browser's net::ERR_BLOCKED_BY_CLIENT.
        const fenced = slot.page && this.#fencedDocument(slot.page, slot);
        throw await this.#failure(step, slot, fenced || error, started, before);
      }
    });
  }

  /**
   * Takes what the tab's fence stopped since it was last asked. During a step
   * a document (the tab or a frame sent onto the daemon) becomes the refusal
   * the step fails with; anything else, and everything stopped between calls,
   * becomes a note for the caller.
   */
  #fencedDocument(
    page: Page,
    slot: PageSlot,
    during = true,
  ): OwnPageRefused | undefined {
    const fenced = this.#fenced.get(page)?.splice(0) ?? [];
    if (fenced.length === 0) return undefined;
    const document = fenced.find((request) => request.document);
    if (document && during) {
      return new OwnPageRefused("the page the tab was sent to", document.url);
    }
    const first = document ?? fenced[0];
    slot.notes.push(
      `${during ? "The page" : "Between calls, the page"} tried to ${
        document ? "go to agentd's own page" : "reach agentd's own origin"
      } (${first.url}${
        fenced.length > 1 ? ` and ${fenced.length - 1} more` : ""
      }); the browser blocked it`,
    );
    return undefined;
  }

  /**
   * Runs a step; a read that a navigation cut short runs again once the new
   * document has loaded. Actions are never repeated: the click may have
   * happened.
   */
  async #runSettled(
    step: Step,
    page: Page,
    run: () => Promise<ToolResult>,
  ): Promise<ToolResult> {
    for (let attempt = 0;; attempt++) {
      try {
        return await run();
      } catch (error) {
        if (
          !step.readOnly || attempt >= NAVIGATION_RETRIES ||
          !NAVIGATED.test(messageOf(error))
        ) throw error;
        await settled(page, this.config.action_timeout_ms);
      }
    }
  }

  /** Whether the browser went away during the call (waits briefly for the disconnect to show). */
  async #browserLost(generation: number, error: unknown): Promise<boolean> {
    const changed = () =>
      this.connection.generation !== generation || !this.connection.connected;
    if (changed()) return true;
    if (!CONNECTION_LOST.test(messageOf(error))) return false;
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (changed()) return true;
    }
    return false;
  }

  #record(
    step: Step,
    slot: PageSlot,
    started: number,
    before: PageState,
    after: PageState,
  ): void {
    const ms = performance.now() - started;
    this.#actions++;
    this.#actionMs.observe(ms);
    this.#log.info("browser_action", {
      tool: step.tool,
      session: slot.key,
      ok: true,
      duration_ms: Math.round(ms),
      before,
      after,
      ...step.log,
    });
  }

  async #failure(
    step: Step,
    slot: PageSlot,
    error: unknown,
    started: number,
    before: PageState | undefined,
  ): Promise<ToolError> {
    const ms = performance.now() - started;
    this.#actions++;
    this.#failures++;
    this.#actionMs.observe(ms);
    const reason = error instanceof ToolError ? error.message : reasonOf(error);
    const page = slot.page;
    let state: PageState | undefined;
    const extra: ToolError["content"] = [];
    if (
      page && !page.isClosed() &&
      (error instanceof OwnPageRefused || this.isOwnPage(page.url()))
    ) {
      // No picture of agentd's own page (it shows the operator's dashboard),
      // nor of a tab a refused step never touched.
      state = { url: page.url(), title: "" };
      extra.push(text("(no screenshot: refused for agentd's own origin)"));
    } else if (page && !page.isClosed() && this.connection.connected) {
      state = await pageState(page);
      const shot = await within(
        page.screenshot({ type: "png", encoding: "base64" }).then(
          (data) => ({ data }),
          (failure: unknown) => ({ failure: reasonOf(failure) }),
        ),
        5_000,
        { failure: "timed out after 5 s" },
      );
      if ("data" in shot) extra.push(imageBlock(shot.data, "image/png"));
      else extra.push(text(`(no screenshot: ${shot.failure})`));
    } else {
      extra.push(text("(no screenshot: no page is open)"));
    }
    if (error instanceof ToolError) extra.unshift(...error.content);
    extra.push(...drainNotes(slot));
    const where = state
      ? ` Page: ${state.url}${state.title ? ` ("${state.title}")` : ""}`
      : "";
    this.#log.warn("browser_action", {
      tool: step.tool,
      session: slot.key,
      ok: false,
      duration_ms: Math.round(ms),
      before: before ?? null,
      after: state ?? null,
      error: reason,
      ...step.log,
    });
    return new ToolError(
      `${step.tool} failed: ${reason.replace(/\.$/, "")}.${where}`,
      extra,
    );
  }

  async health(): Promise<{ [key: string]: JsonValue }> {
    const browser = this.connection.status();
    const state = this.connection.state;
    let tabs: number | null = null;
    if (this.connection.connected) {
      const listed = await within(
        this.connection.browser().then((b) => b.pages()),
        2_000,
        undefined,
      ).catch(() => undefined);
      tabs = listed?.length ?? null;
    }
    const degraded = state === "disconnected" ||
      (state === "not_started" && "last_error" in browser);
    return {
      status: degraded ? "degraded" : "ok",
      summary: browserSummary(
        browser,
        tabs,
        this.config.launch_on_start === true,
      ),
      browser: {
        ...browser,
        connected: this.connection.connected,
        pages: tabs,
        sessions: this.pages.size,
      },
      launch: this.config.launch_on_start ? "on_start" : "on_first_use",
      actions: {
        count: this.#actions,
        failed: this.#failures,
        retried_after_restart: this.#retries,
        p50_ms: rounded(this.#actionMs.quantile(0.5)),
        p95_ms: rounded(this.#actionMs.quantile(0.95)),
      },
      page_loads: {
        count: this.#loadMs.count,
        last_ms: this.#lastLoad?.ms ?? null,
        last_url: this.#lastLoad?.url ?? null,
        p50_ms: rounded(this.#loadMs.quantile(0.5)),
        p95_ms: rounded(this.#loadMs.quantile(0.95)),
      },
      screenshot_dirs: this.screenshotDirs,
      results: { count: this.results.count, bytes: this.results.bytes },
    };
  }

  metrics(): Metric[] {
    const status = this.connection.status();
    return [
      {
        name: "agentd_browser_connected",
        help:
          "1 while the browser automation server holds a browser connection",
        type: "gauge",
        samples: [{ value: this.connection.connected ? 1 : 0 }],
      },
      {
        name: "agentd_browser_restarts_total",
        help: "Browser restarts after a crash or disconnect",
        type: "counter",
        samples: [{ value: Number(status.restarts ?? 0) }],
      },
      {
        name: "agentd_browser_page_load_ms",
        help: "Page load time of navigate in milliseconds (recent loads)",
        type: "summary",
        samples: this.#loadMs.samples(),
      },
    ];
  }

  /** The Shutdown phase: a launched browser is closed, an attached one left running. */
  async stop(): Promise<void> {
    await this.pages.close();
    await this.connection.close();
  }
}

/** Waits (bounded) until the page's current document has loaded. */
async function settled(page: Page, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + Math.min(timeoutMs, 10_000);
  while (Date.now() < deadline) {
    const state: unknown = await page.evaluate("document.readyState").catch(
      () => "loading",
    );
    if (state === "complete") return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function rounded(value: number): number | null {
  return Number.isNaN(value) ? null : Math.round(value);
}

function text(value: string): { type: "text"; text: string } {
  return { type: "text", text: value };
}

/** What happened to the tab since the last report (dialogs, a restore). */
function drainNotes(slot: PageSlot): { type: "text"; text: string }[] {
  return slot.notes.splice(0).map((note) => text(`Note: ${note}`));
}

function withNotes(result: ToolResult, slot: PageSlot): ToolResult {
  const notes = drainNotes(slot);
  return notes.length
    ? { ...result, content: [...result.content, ...notes] }
    : result;
}

/** The dashboard's one line for this server: the browser's state and pages. */
function browserSummary(
  browser: { [key: string]: JsonValue },
  pages: number | null,
  launchOnStart: boolean,
): string {
  const error = typeof browser.last_error === "string"
    ? `: ${browser.last_error}`
    : "";
  switch (browser.state) {
    case "connected": {
      const how = browser.mode === "attached" ? "attached" : "launched";
      const open = pages === null
        ? ""
        : ` · ${pages} ${pages === 1 ? "page" : "pages"}`;
      return `browser ${how}${open}`;
    }
    case "not_started":
      return error
        ? `browser not started${error}`
        : `browser not started (launches ${
          launchOnStart ? "on start" : "on first use"
        })`;
    case "disconnected":
      return `browser disconnected${error}`;
    default:
      return `browser ${String(browser.state)}`;
  }
}
