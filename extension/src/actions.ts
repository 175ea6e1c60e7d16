// The extension's action set: what a daemon may ask over the native port
// (`{type:"call", id, action, params}` → `{type:"result", id, ok, value|error}`).
// Generic on purpose, so the in-page server and the extension bridge share
// it; extension/README.md lists every action with its parameters.

/// <reference lib="dom" />
/// <reference types="@types/chrome" />

import { isAxNode, pruneTree, withDebugger } from "./debugger.ts";
import { networkLog } from "./network.ts";
import type { Json } from "./json.ts";
import {
  daemonPageRefusal,
  reachesDaemon,
} from "../../platform/daemon_origin.ts";
import { daemonOf } from "./daemon.ts";

type Params = Record<string, unknown>;

export interface ActionContext {
  /** Records that an agent acted on this tab (the popup lists them). */
  touched(tab: chrome.tabs.Tab, action: string): void;
  /** Tells the daemon something happened (it logs it and keeps the recent ones for /health). */
  event(name: string, data: Json): void;
  status(): Json;
}

export type Action = (params: Params, context: ActionContext) => Promise<Json>;

function str(params: Params, name: string): string | undefined {
  const value = params[name];
  return typeof value === "string" ? value : undefined;
}

function num(params: Params, name: string): number | undefined {
  const value = params[name];
  return typeof value === "number" && Number.isFinite(value)
    ? value
    : undefined;
}

function describeTab(tab: chrome.tabs.Tab): { [key: string]: Json } {
  return {
    tab_id: tab.id ?? null,
    window_id: tab.windowId,
    url: tab.url ?? null,
    title: tab.title ?? null,
    active: tab.active,
    status: tab.status ?? null,
  };
}

/** The tab named by `tab_id`, else the active tab of the last focused window. */
async function resolveTab(params: Params): Promise<chrome.tabs.Tab> {
  const id = num(params, "tab_id");
  if (id !== undefined) {
    try {
      return await chrome.tabs.get(id);
    } catch {
      throw new Error(`No tab with id ${id}; list tabs with list_tabs`);
    }
  }
  const [focused] = await chrome.tabs.query({
    active: true,
    lastFocusedWindow: true,
  });
  const tab = focused ?? (await chrome.tabs.query({ active: true }))[0];
  if (!tab || tab.id === undefined) {
    throw new Error("There is no active tab; open a page first");
  }
  return tab;
}

/** Throws when the tab shows (or is loading) a page of the daemon's own origin. */
function assertNotDaemon(tab: chrome.tabs.Tab, params: Params): void {
  const daemon = daemonOf(params);
  if (daemon === undefined) return;
  for (const url of [tab.url, tab.pendingUrl]) {
    if (url !== undefined && reachesDaemon(url, daemon)) {
      throw new Error(daemonPageRefusal(`tab ${tab.id}`, url));
    }
  }
}

/** `scheme://host[:port]` as the page itself will see it (file pages: `file://`). */
function originOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}`;
}

function scriptable(tab: chrome.tabs.Tab, params: Params): number {
  const url = tab.url ?? "";
  if (tab.id === undefined || !/^(https?|file):/.test(url)) {
    throw new Error(
      `Tab ${tab.id} shows ${
        url || "nothing yet"
      }; the extension can only act on http(s) and file pages`,
    );
  }
  assertNotDaemon(tab, params);
  return tab.id;
}

/**
 * Sends a DOM action to the tab's content script. A tab whose script is gone
 * (navigated mid-way, opened before the extension loaded) gets it injected
 * again, then the action is retried once: the "re-inject" move.
 */
async function inPage(
  params: Params,
  context: ActionContext,
  action: string,
): Promise<Json> {
  const tab = await resolveTab(params);
  const tabId = scriptable(tab, params);
  context.touched(tab, action);
  // The content script checks its own location against the daemon's origin
  // when the message arrives: the tab may have navigated since tabs.get.
  const message = { agentd: action, args: params };
  let reply: unknown;
  try {
    reply = await chrome.tabs.sendMessage(tabId, message, { frameId: 0 });
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    if (!/Receiving end does not exist|message port closed/i.test(text)) {
      throw error;
    }
    await chrome.scripting.executeScript({
      target: { tabId },
      files: ["content.js"],
    });
    context.event("content_reinjected", {
      tab_id: tabId,
      url: tab.url ?? null,
      action,
    });
    reply = await chrome.tabs.sendMessage(tabId, message, { frameId: 0 });
  }
  if (typeof reply !== "object" || reply === null || !("ok" in reply)) {
    throw new Error(`The page in tab ${tabId} did not answer ${action}`);
  }
  if (reply.ok !== true) {
    throw new Error(
      "error" in reply ? String(reply.error) : `${action} failed`,
    );
  }
  const value: Json = "value" in reply ? jsonOf(reply.value) : null;
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { tab_id: tabId, ...value }
    : value;
}

function jsonOf(value: unknown): Json {
  return JSON.parse(JSON.stringify(value ?? null));
}

/**
 * Runs in the page's MAIN world: evaluates like a console (top-level await; a
 * top-level `return` makes a function body). Serialised into the page, so it
 * cannot call the daemon-origin rule: it runs only if the page is still on
 * `origin`, the one checked against that rule just before.
 */
async function evaluateInPage(
  source: string,
  origin: string,
): Promise<{ value?: unknown; error?: string; moved?: string }> {
  if (`${location.protocol}//${location.host}` !== origin) {
    return { moved: location.href };
  }
  const describe = (value: unknown): unknown => {
    if (value === undefined) return null;
    if (typeof value === "function") return String(value).slice(0, 500);
    if (typeof value === "bigint" || typeof value === "symbol") {
      return String(value);
    }
    if (value instanceof Node) {
      return value instanceof Element
        ? value.outerHTML.slice(0, 2000)
        : value.textContent;
    }
    try {
      return JSON.parse(JSON.stringify(value) ?? "null");
    } catch {
      return String(value);
    }
  };
  const indirect = eval;
  try {
    let value: unknown;
    try {
      value = indirect(source);
    } catch (error) {
      if (
        !(error instanceof SyntaxError) || !/await|return/.test(error.message)
      ) {
        throw error;
      }
      try {
        // One expression with a top-level await: keep its value.
        value = indirect(`(async () => (\n${source}\n))()`);
      } catch (inner) {
        if (!(inner instanceof SyntaxError)) throw inner;
        // Statements with return or await: a function body.
        value = indirect(`(async () => {\n${source}\n})()`);
      }
    }
    return { value: describe(await value) };
  } catch (error) {
    return {
      error: error instanceof Error
        ? `${error.name}: ${error.message}`
        : String(error),
    };
  }
}

export const actions: Record<string, Action> = {
  /** The extension's own state: version, port, tabs touched. */
  "status": (_params, context) => Promise.resolve(context.status()),

  /** Every open tab. */
  "tabs.list": async () => {
    const tabs = await chrome.tabs.query({});
    return { tabs: tabs.map(describeTab) };
  },

  /** URL, title, load state, console and DOM mutation summary of a tab. */
  "page.state": async (params, context) => {
    const tab = await resolveTab(params);
    const base = describeTab(tab);
    if (!/^(https?|file):/.test(tab.url ?? "")) return base;
    try {
      assertNotDaemon(tab, params);
    } catch (error) {
      // What tabs.list shows anyway, so the tab list stays usable.
      return {
        ...base,
        refused: String(error instanceof Error ? error.message : error),
      };
    }
    const page = await inPage(params, context, "page.state");
    return typeof page === "object" && page !== null && !Array.isArray(page)
      ? {
        ...page,
        tab_status: tab.status ?? null,
        active: tab.active,
        window_id: tab.windowId,
      }
      : base;
  },

  "dom.get": (params, context) => inPage(params, context, "dom.get"),
  "dom.text": (params, context) => inPage(params, context, "dom.text"),
  "dom.wait": (params, context) => inPage(params, context, "dom.wait"),
  "dom.fill": (params, context) => inPage(params, context, "dom.fill"),
  "storage.get": (params, context) => inPage(params, context, "storage.get"),

  /** A script in the page's MAIN world (the page's own globals), its value as JSON. */
  "script.run": async (params, context) => {
    const tab = await resolveTab(params);
    const tabId = scriptable(tab, params);
    context.touched(tab, "script.run");
    const [frame] = await chrome.scripting.executeScript({
      target: { tabId },
      world: "MAIN",
      func: evaluateInPage,
      args: [str(params, "script") ?? "", originOf(tab.url ?? "")],
    });
    const outcome: unknown = frame?.result;
    if (typeof outcome === "object" && outcome !== null && "moved" in outcome) {
      throw new Error(
        `Tab ${tabId} left ${tab.url} for ${
          String(outcome.moved)
        } before the script ran; the script did not run. Check the tab and call again.`,
      );
    }
    if (typeof outcome === "object" && outcome !== null && "error" in outcome) {
      throw new Error(`The script threw ${String(outcome.error)}`);
    }
    const value =
      typeof outcome === "object" && outcome !== null && "value" in outcome
        ? jsonOf(outcome.value)
        : null;
    return { tab_id: tabId, url: tab.url ?? null, value };
  },

  /** Cookies of a domain (default: the tab's host), http-only ones included. */
  "cookies.get": async (params, context) => {
    let domain = str(params, "domain");
    if (domain === undefined) {
      const tab = await resolveTab(params);
      context.touched(tab, "cookies.get");
      domain = new URL(tab.url ?? "about:blank").hostname;
      if (!domain) {
        throw new Error(
          `Tab ${tab.id} has no domain (${tab.url}); pass domain`,
        );
      }
    }
    const cookies = await chrome.cookies.getAll({ domain });
    return {
      domain,
      cookies: cookies.map((cookie) => ({
        name: cookie.name,
        value: cookie.value,
        domain: cookie.domain,
        path: cookie.path,
        secure: cookie.secure,
        http_only: cookie.httpOnly,
        same_site: cookie.sameSite,
        expires: cookie.expirationDate === undefined
          ? null
          : new Date(cookie.expirationDate * 1000).toISOString(),
      })),
    };
  },

  /** Sets cookies; each needs name, value, domain; path defaults to "/". */
  "cookies.set": async (params) => {
    const list = Array.isArray(params.cookies) ? params.cookies : [];
    const set: Json[] = [];
    for (const item of list) {
      if (typeof item !== "object" || item === null) continue;
      const cookie: Params = { ...item };
      const domain = str(cookie, "domain") ?? "";
      const path = str(cookie, "path") ?? "/";
      const host = domain.replace(/^\./, "");
      const secure = cookie.secure === true;
      const url = str(cookie, "url") ??
        `${secure ? "https" : "http"}://${host}${path}`;
      const details: chrome.cookies.SetDetails = {
        url,
        name: str(cookie, "name") ?? "",
        value: str(cookie, "value") ?? "",
        path,
        secure,
      };
      // A leading dot (or an explicit domain) makes a domain cookie; otherwise host-only.
      if (domain.startsWith(".")) details.domain = domain;
      const result = await chrome.cookies.set(details);
      if (!result) {
        throw new Error(
          `The browser refused cookie "${details.name}" for ${url}${
            chrome.runtime.lastError
              ? `: ${chrome.runtime.lastError.message}`
              : ""
          }`,
        );
      }
      set.push({
        name: result.name,
        domain: result.domain,
        path: result.path,
        url,
      });
    }
    return { set };
  },

  /** Starts logging requests whose URL matches the pattern; returns what matched so far. */
  "network.intercept": async (params) => {
    const pattern = str(params, "pattern") ?? "";
    await networkLog.intercept(pattern);
    return await networkLog.entries(pattern);
  },

  /** The log of matched requests (all patterns, or one). */
  "network.log": (params) => networkLog.entries(str(params, "pattern")),

  /** The tab's accessibility tree through the debugger (Accessibility.getFullAXTree). */
  "a11y.tree": async (params, context) => {
    const tab = await resolveTab(params);
    const tabId = scriptable(tab, params);
    context.touched(tab, "a11y.tree");
    const maxNodes = num(params, "max_nodes") ?? 500;
    const result = await withDebugger(
      tabId,
      (target) =>
        chrome.debugger.sendCommand(target, "Accessibility.getFullAXTree", {}),
    );
    const nodes =
      typeof result === "object" && result !== null && "nodes" in result &&
        Array.isArray(result.nodes)
        ? result.nodes.filter(isAxNode)
        : [];
    // The debugger read the tab as it was then: if it had moved to the
    // daemon's page meanwhile, the tree is not returned.
    assertNotDaemon(await chrome.tabs.get(tabId), params);
    const pruned = pruneTree(nodes, maxNodes);
    return { tab_id: tabId, url: tab.url ?? null, ...pruned };
  },

  /** One DevTools protocol command on a tab through chrome.debugger (for bridges). */
  "cdp.send": async (params, context) => {
    const tab = await resolveTab(params);
    const tabId = scriptable(tab, params);
    context.touched(tab, "cdp.send");
    const method = str(params, "method") ?? "";
    const commandParams =
      typeof params.params === "object" && params.params !== null
        ? { ...params.params }
        : {};
    const result = await withDebugger(
      tabId,
      (target) => chrome.debugger.sendCommand(target, method, commandParams),
    );
    return { tab_id: tabId, method, result: jsonOf(result) };
  },
};
