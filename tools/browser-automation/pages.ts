// Pages: one browser tab per MCP session, each behind its own mutex. Calls
// of one session run one at a time on its tab; sessions never share a tab,
// so one agent's navigation cannot pull the page from under another's.
// Cookies and storage are the profile's, shared by all tabs.

import type { BrowserConnection } from "../../platform/browser.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import { Mutex } from "../../platform/mutex.ts";
import type { Browser, Page } from "../../platform/puppeteer.ts";
import { ToolError } from "../kit/mod.ts";
import { resultSession } from "../kit/session_results.ts";

/**
 * The session's tab: its MCP session's, else its agent's; stdio and the
 * operator's in-process calls share `default`. The same key as its results
 * (SessionResults), so a tab closed for idleness takes its results along.
 */
export const sessionKey = resultSession;

export interface PageSlot {
  readonly key: string;
  readonly lock: Mutex;
  page: Page | undefined;
  /** The connection generation the page belongs to. */
  generation: number;
  /** Where the tab was last: reopened after a browser restart. */
  lastUrl: string;
  /** Main-frame navigations committed so far (tells a step that moved the tab). */
  navigations: number;
  lastUsed: number;
  /** Whether this server opened the tab (and closes it when it leaves an attached browser). */
  owned: boolean;
  /** What happened to the tab between calls (dialogs answered, a restore), for the next result. */
  notes: string[];
}

export interface PagesOptions {
  connection: BrowserConnection;
  log: Logger;
  /** Most tabs open at once; the least recently used session's tab is closed beyond. */
  maxPages: number;
  /** A session's tab (not `default`'s) is closed after this long unused. */
  idleMs: number;
  /** Timeout of the navigations that restore tabs. */
  navigationTimeoutMs: number;
  /** Prepares a tab (timeouts, the fence around agentd's origin) before first use. */
  setup(page: Page): Promise<void>;
  /** Whether a URL is agentd's own page: such a tab of the user's is never adopted. */
  ownPage?(url: string): boolean;
  /** A session's tab closed for good (idle, or beyond max_pages): what it kept goes too. */
  forgotten?(key: string): void;
  clock?: () => number;
}

const SWEEP_MS = 60_000;

export class Pages {
  readonly #options: PagesOptions;
  readonly #clock: () => number;
  readonly #slots = new Map<string, PageSlot>();
  readonly #sweeper: ReturnType<typeof setInterval>;

  constructor(options: PagesOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    options.connection.onRestart((browser) => this.#restore(browser));
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_MS);
  }

  get size(): number {
    return this.#slots.size;
  }

  /** Runs `body` holding the session's lock; `body` gets its tab with `open`. */
  async withSlot<T>(
    key: string,
    body: (slot: PageSlot) => Promise<T>,
  ): Promise<T> {
    const slot = this.#slot(key);
    return await slot.lock.run(async () => {
      slot.lastUsed = this.#clock();
      try {
        return await body(slot);
      } finally {
        slot.lastUsed = this.#clock();
      }
    });
  }

  /** The slot's live tab, opening one (or the browser) when needed. Call holding the slot's lock. */
  async open(slot: PageSlot): Promise<Page> {
    const browser = await this.#options.connection.browser();
    const generation = this.#options.connection.generation;
    const page = slot.page;
    if (page && !page.isClosed() && slot.generation === generation) return page;
    return await this.#openTab(browser, generation, slot, page !== undefined);
  }

  /**
   * A new tab for the slot. A fresh slot in a browser where no slot holds a
   * tab adopts the browser's first tab (the launched browser's blank tab, or
   * the front tab of an attached browser) instead of opening another.
   */
  async #openTab(
    browser: Browser,
    generation: number,
    slot: PageSlot,
    replacing: boolean,
  ): Promise<Page> {
    let page: Page | undefined;
    let adopted = false;
    if (!replacing || slot.generation !== generation) {
      const tabs = await browser.pages();
      // Checked after the await, so two sessions cannot adopt the same tab.
      const held = new Set(
        [...this.#slots.values()].filter((other) =>
          other !== slot && other.generation === generation
        ).map((other) => other.page),
      );
      if (![...held].some((tab) => tab && !tab.isClosed())) {
        // The user's dashboard tab stays theirs: the fence would cut it off.
        page = tabs.find((tab) =>
          !tab.isClosed() && !held.has(tab) &&
          !this.#options.ownPage?.(tab.url())
        );
        adopted = page !== undefined;
      }
    }
    page ??= await browser.newPage();
    slot.page = page;
    slot.generation = generation;
    // An adopted tab of an attached browser is the user's: left open at shutdown.
    slot.owned = !adopted || this.#options.connection.mode === "launched";
    page.on("framenavigated", (frame) => {
      if (slot.page === page && frame === page.mainFrame()) {
        slot.lastUrl = frame.url();
        slot.navigations++;
      }
    });
    page.on("dialog", (dialog) => {
      slot.notes.push(
        `The page showed ${
          dialog.type() === "alert" ? "an" : "a"
        } ${dialog.type()} dialog ("${dialog.message()}"); it was ${
          dialog.type() === "alert" || dialog.type() === "beforeunload"
            ? "accepted"
            : "dismissed"
        }`,
      );
      // A dialog blocks the page; alerts are accepted, questions declined.
      const answer = dialog.type() === "alert" ||
          dialog.type() === "beforeunload"
        ? dialog.accept()
        : dialog.dismiss();
      answer.catch(() => undefined);
    });
    await this.#options.setup(page);
    return page;
  }

  /** After a browser restart: every session's tab reopened at its last URL. */
  async #restore(browser: Browser): Promise<void> {
    const generation = this.#options.connection.generation;
    const slots = [...this.#slots.values()];
    // Read before any new tab reports its first (blank) navigation.
    const urls = new Map(slots.map((slot) => [slot, slot.lastUrl]));
    for (const slot of slots) slot.page = undefined;
    const restored: string[] = [];
    // Tabs open one by one (the first adopts the new browser's blank tab), load in parallel.
    const tabs: [PageSlot, Page][] = [];
    for (const slot of slots) {
      tabs.push([slot, await this.#openTab(browser, generation, slot, false)]);
    }
    await Promise.all(tabs.map(async ([slot, page]) => {
      const url = urls.get(slot) ?? "";
      if (url === "" || url === "about:blank") return;
      try {
        await page.goto(url, {
          waitUntil: "load",
          timeout: this.#options.navigationTimeoutMs,
        });
        restored.push(url);
        slot.notes.push(
          `The browser restarted after it went away; this tab was reopened at ${url}`,
        );
      } catch (error) {
        this.#options.log.warn("browser_restore_page_failed", {
          session: slot.key,
          url,
          error: messageOf(error),
        });
      }
    }));
    this.#options.log.info("browser_session_restored", {
      tabs: slots.length,
      urls: restored,
    });
  }

  #slot(key: string): PageSlot {
    const existing = this.#slots.get(key);
    if (existing) return existing;
    if (this.#slots.size >= this.#options.maxPages) this.#evict();
    const slot: PageSlot = {
      key,
      lock: new Mutex(),
      page: undefined,
      generation: -1,
      lastUrl: "about:blank",
      navigations: 0,
      lastUsed: this.#clock(),
      owned: false,
      notes: [],
    };
    this.#slots.set(key, slot);
    return slot;
  }

  /** Makes room for one more session by closing the least recently used idle tab. */
  #evict(): void {
    const idle = [...this.#slots.values()]
      .filter((slot) => !slot.lock.busy && slot.key !== "default")
      .sort((a, b) => a.lastUsed - b.lastUsed);
    const victim = idle[0];
    if (!victim) {
      throw new ToolError(
        `Too many browser sessions at once (max_pages ${this.#options.maxPages}, all busy); try again shortly`,
      );
    }
    this.#options.log.warn("browser_page_evicted", {
      session: victim.key,
      idle_ms: this.#clock() - victim.lastUsed,
    });
    this.#drop(victim);
  }

  #sweep(): void {
    const cutoff = this.#clock() - this.#options.idleMs;
    for (const slot of this.#slots.values()) {
      if (
        slot.key !== "default" && !slot.lock.busy && slot.lastUsed < cutoff
      ) {
        this.#options.log.info("browser_page_idle_closed", {
          session: slot.key,
        });
        this.#drop(slot);
      }
    }
  }

  /** The session ended: its tab closes once a call still running on it ends. */
  release(key: string): void {
    const slot = this.#slots.get(key);
    if (!slot) {
      this.#options.forgotten?.(key);
      return;
    }
    slot.lock.run(() => {
      if (this.#slots.get(key) === slot) {
        this.#options.log.info("browser_page_session_closed", { session: key });
        this.#drop(slot);
      }
      return Promise.resolve();
    }).catch(() => undefined);
  }

  #drop(slot: PageSlot): void {
    this.#slots.delete(slot.key);
    this.#options.forgotten?.(slot.key);
    const page = slot.page;
    slot.page = undefined;
    if (page && !page.isClosed() && slot.owned) {
      page.close().catch(() => undefined);
    }
  }

  /** Closes the tabs this server opened in an attached browser; a launched one closes whole. */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const attached = this.#options.connection.mode === "attached";
    const closing: Promise<void>[] = [];
    for (const slot of this.#slots.values()) {
      const page = slot.page;
      if (attached && slot.owned && page && !page.isClosed()) {
        closing.push(page.close().catch(() => undefined));
      }
    }
    await Promise.all(closing);
    this.#slots.clear();
  }
}
