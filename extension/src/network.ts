// intercept_network's log: webRequest observes every request (MV3 cannot
// block without enterprise policy), and those whose URL matches an active
// pattern are kept in chrome.storage.session, so the log survives the
// service worker being stopped and woken.

/// <reference lib="dom" />
/// <reference types="@types/chrome" />

export interface NetworkEntry {
  [key: string]: string | number | null;
  request_id: string;
  pattern: string;
  url: string;
  method: string;
  type: string;
  tab_id: number;
  started: string;
  status: number | null;
  error: string | null;
  duration_ms: number | null;
}

const MAX_ENTRIES = 500;
const KEY = "agentd_network";

interface Saved {
  patterns: string[];
  entries: NetworkEntry[];
}

/** `*` matches any run of characters; without `*` the pattern matches as a substring. */
export function matches(pattern: string, url: string): boolean {
  if (!pattern.includes("*")) return url.includes(pattern);
  const source = pattern.split("*").map((part) =>
    part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")
  )
    .join(".*");
  return new RegExp(`^${source}$`).test(url);
}

class NetworkLog {
  #state: Saved = { patterns: [], entries: [] };
  #loaded: Promise<void> | undefined;
  #saveTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #started = new Map<string, number>();

  load(): Promise<void> {
    this.#loaded ??= chrome.storage.session.get(KEY).then((stored) => {
      const value: unknown = stored[KEY];
      if (
        typeof value === "object" && value !== null && "patterns" in value &&
        "entries" in value
      ) {
        const patterns = Array.isArray(value.patterns)
          ? value.patterns.map(String)
          : [];
        const entries: NetworkEntry[] = Array.isArray(value.entries)
          ? value.entries
          : [];
        this.#state = {
          patterns: [...new Set([...patterns, ...this.#state.patterns])],
          entries: [...entries, ...this.#state.entries],
        };
      }
    });
    return this.#loaded;
  }

  #save(): void {
    if (this.#saveTimer !== undefined) return;
    this.#saveTimer = setTimeout(() => {
      this.#saveTimer = undefined;
      chrome.storage.session.set({ [KEY]: this.#state }).catch(() => {});
    }, 50);
  }

  async intercept(pattern: string): Promise<void> {
    await this.load();
    if (!this.#state.patterns.includes(pattern)) {
      this.#state.patterns.push(pattern);
    }
    await chrome.storage.session.set({ [KEY]: this.#state });
  }

  async entries(
    pattern?: string,
  ): Promise<{ patterns: string[]; entries: NetworkEntry[] }> {
    await this.load();
    return {
      patterns: [...this.#state.patterns],
      entries: this.#state.entries.filter((entry) =>
        pattern === undefined || entry.pattern === pattern ||
        matches(pattern, entry.url)
      ),
    };
  }

  #update(requestId: string, change: Partial<NetworkEntry>): void {
    const entry = this.#state.entries.find((candidate) =>
      candidate.request_id === requestId
    );
    if (!entry) return;
    Object.assign(entry, change);
    const started = this.#started.get(requestId);
    if (started !== undefined) {
      entry.duration_ms = Math.round(performance.now() - started);
      this.#started.delete(requestId);
    }
    this.#save();
  }

  /** Registered at the top level of the worker, so requests wake it. */
  listen(): void {
    const filter = { urls: ["<all_urls>"] };
    chrome.webRequest.onBeforeRequest.addListener((details) => {
      void this.load().then(() => {
        const pattern = this.#state.patterns.find((candidate) =>
          matches(candidate, details.url)
        );
        if (pattern === undefined) return;
        this.#started.set(details.requestId, performance.now());
        this.#state.entries.push({
          request_id: details.requestId,
          pattern,
          url: details.url,
          method: details.method,
          type: details.type,
          tab_id: details.tabId,
          started: new Date(details.timeStamp).toISOString(),
          status: null,
          error: null,
          duration_ms: null,
        });
        if (this.#state.entries.length > MAX_ENTRIES) {
          this.#state.entries.shift();
        }
        this.#save();
      });
      return undefined;
    }, filter);
    chrome.webRequest.onCompleted.addListener((details) => {
      void this.load().then(() =>
        this.#update(details.requestId, { status: details.statusCode })
      );
    }, filter);
    chrome.webRequest.onErrorOccurred.addListener((details) => {
      void this.load().then(() =>
        this.#update(details.requestId, { error: details.error })
      );
    }, filter);
  }
}

export const networkLog = new NetworkLog();
