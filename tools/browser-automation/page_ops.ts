// Small steps the tools share: bounded waits, the page's URL and title,
// waiting for a navigation an action may start, and paged text results.

import type { HTTPRequest, Page } from "../../platform/puppeteer.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { ToolError, type ToolResult } from "../kit/mod.ts";
import { messageOf } from "../../platform/errors.ts";

/**
 * `promise`, or `fallback` once `ms` pass. The promise keeps running; its
 * late rejection is ignored.
 */
export async function within<T, F>(
  promise: Promise<T>,
  ms: number,
  fallback: F,
): Promise<T | F> {
  promise.catch(() => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<F>((resolve) => {
        timer = setTimeout(() => resolve(fallback), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface PageState {
  url: string;
  title: string;
}

/** URL and title, never blocking long on a busy page. */
export async function pageState(page: Page): Promise<PageState> {
  if (page.isClosed()) return { url: page.url(), title: "" };
  const title = await within(page.title().catch(() => ""), 2_000, "");
  return { url: page.url(), title };
}

/**
 * Marks the document when a navigation is requested in it. The Navigation
 * API's `navigate` event fires synchronously inside the click or submit that
 * starts it, so once the input call returns the mark is already there: no
 * wall-clock grace that a loaded machine can outrun. False where the page
 * has no Navigation API (the caller then falls back to a short grace).
 */
const ARM_PROBE = `(() => {
  const key = Symbol.for("agentd.navigation");
  const nav = globalThis.navigation;
  if (!nav || typeof nav.addEventListener !== "function") return false;
  if (!globalThis[key]) {
    globalThis[key] = { requested: false };
    nav.addEventListener("navigate", () => { globalThis[key].requested = true; });
  }
  globalThis[key].requested = false;
  return true;
})()`;
const READ_PROBE =
  `globalThis[Symbol.for("agentd.navigation")]?.requested === true`;

/** Grace for pages without the Navigation API (a navigation starts within a few ms). */
const NAVIGATION_GRACE_MS = 50;

/** Whether the probe saw a navigation; a context torn down meanwhile means one began. */
async function navigationRequested(page: Page): Promise<boolean> {
  try {
    return await page.evaluate(READ_PROBE) === true;
  } catch {
    return !page.isClosed();
  }
}

const NOT_DONE = Symbol("not done");

/**
 * `action`, failed after `ms`: a click the browser never delivers must not
 * hold the tab until the protocol's backstop. (Not for typing: its time grows
 * with the text, and each key is dispatched, never waited on.)
 */
export async function bounded<T>(action: Promise<T>, ms: number): Promise<T> {
  const value = await within(action, ms, NOT_DONE);
  if (value === NOT_DONE) {
    throw new ToolError(
      `The action did not finish within ${ms} ms (action_timeout_ms)`,
    );
  }
  return value;
}

/**
 * Runs `action` and, when it started a navigation of the main frame (a link
 * click, a form submit), waits until the new page has loaded.
 */
export async function withNavigation<T>(
  page: Page,
  timeoutMs: number,
  action: () => Promise<T>,
): Promise<{ value: T; navigated: boolean }> {
  let started = false;
  const onRequest = (request: HTTPRequest) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
      started = true;
    }
  };
  const abort = new AbortController();
  page.on("request", onRequest);
  const loaded = page.waitForNavigation({
    waitUntil: "load",
    timeout: timeoutMs,
    signal: abort.signal,
  }).then(() => ({ ok: true as const }), (error: unknown) => ({
    ok: false as const,
    error,
  }));
  try {
    const armed = await page.evaluate(ARM_PROBE).then((v) => v === true)
      .catch(() => false);
    const value = await action();
    if (!started) {
      if (armed) started = await navigationRequested(page);
      else {
        await new Promise((resolve) =>
          setTimeout(resolve, NAVIGATION_GRACE_MS)
        );
      }
    }
    if (!started) return { value, navigated: false };
    const outcome = await loaded;
    if (!outcome.ok && !abort.signal.aborted) throw outcome.error;
    return { value, navigated: true };
  } finally {
    page.off("request", onRequest);
    abort.abort();
    await loaded;
  }
}

/** The first line of an error's message, without puppeteer's class prefix. */
export function reasonOf(error: unknown): string {
  const message = messageOf(error);
  return message.split("\n")[0].replace(/^(Protocol|Timeout)Error: /, "")
    .trim();
}

export interface Slice {
  text: string;
  offset: number;
  total: number;
  /** Where the next page starts, or null at the end. */
  next: number | null;
}

export function slice(text: string, offset: number, budget: number): Slice {
  const start = Math.min(offset, text.length);
  const end = Math.min(start + budget, text.length);
  return {
    text: text.slice(start, end),
    offset: start,
    total: text.length,
    next: end < text.length ? end : null,
  };
}

/**
 * A text result bounded by the budget: the text itself for the model (with a
 * marker saying how to get the rest) and the same in structuredContent.
 */
export function pagedText(
  full: string,
  offset: number,
  budget: number,
  meta: { [key: string]: JsonValue },
): ToolResult {
  const part = slice(full, offset, budget);
  let shown = part.text;
  if (part.next !== null) {
    shown += `\n\n… truncated, ${
      part.total - part.next
    } more characters; call again with offset=${part.next}`;
  }
  if (part.offset > 0 && part.offset >= part.total) {
    shown = `(offset ${offset} is past the end: ${part.total} characters)`;
  }
  return {
    content: [{ type: "text", text: shown }],
    structuredContent: {
      ...meta,
      text: part.text,
      offset: part.offset,
      total_chars: part.total,
      next_offset: part.next,
    },
  };
}
