// The content script (isolated world): runs the DOM and storage actions the
// background page sends it, keeps the page's console output and a summary of
// DOM mutations, and tells the background page when a page is ready (which
// also wakes a stopped service worker).

/// <reference lib="dom" />
/// <reference types="@types/chrome" />

import {
  type Args,
  fill,
  getDom,
  pathOf,
  storage,
  textContent,
  waitForElement,
} from "./page_dom.ts";
import type { Json } from "./json.ts";
import {
  daemonPageRefusal,
  reachesDaemon,
} from "../../platform/daemon_origin.ts";
import { daemonOf } from "./daemon.ts";

const MAX_CONSOLE = 200;
const MAX_MUTATIONS = 50;

interface ConsoleEntry {
  level: string;
  text: string;
  time: string;
}

// Injected twice (manifest, then a re-injection), only the first one runs;
// a script orphaned by an extension reload (no runtime id) is replaced.
const scope: Record<string, unknown> = globalThis;
if (scope.__agentdContent !== chrome.runtime?.id) {
  scope.__agentdContent = chrome.runtime?.id;
  start();
}

function start(): void {
  const consoleEntries: ConsoleEntry[] = [];
  const mutations = {
    records: 0,
    added_nodes: 0,
    removed_nodes: 0,
    attribute_changes: 0,
    text_changes: 0,
    recent: [] as { type: string; target: string; time: string }[],
  };

  document.addEventListener("agentd:console", (event) => {
    if (!(event instanceof CustomEvent) || typeof event.detail !== "string") {
      return;
    }
    let entry: ConsoleEntry;
    try {
      const parsed: unknown = JSON.parse(event.detail);
      if (
        typeof parsed !== "object" || parsed === null || !("level" in parsed) ||
        !("text" in parsed)
      ) return;
      entry = {
        level: String(parsed.level),
        text: String(parsed.text),
        time: new Date().toISOString(),
      };
    } catch {
      return;
    }
    consoleEntries.push(entry);
    if (consoleEntries.length > MAX_CONSOLE) consoleEntries.shift();
    chrome.runtime.sendMessage({ type: "console", entry }).catch(() => {});
  });

  const observer = new MutationObserver((records) => {
    for (const record of records) {
      mutations.records++;
      mutations.added_nodes += record.addedNodes.length;
      mutations.removed_nodes += record.removedNodes.length;
      if (record.type === "attributes") mutations.attribute_changes++;
      if (record.type === "characterData") mutations.text_changes++;
      mutations.recent.push({
        type: record.type,
        target: pathOf(record.target),
        time: new Date().toISOString(),
      });
      if (mutations.recent.length > MAX_MUTATIONS) mutations.recent.shift();
    }
  });
  const observe = () =>
    observer.observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
  observe();

  const actions: Record<string, (args: Args) => Promise<Json> | Json> = {
    "dom.get": (args) => getDom(args),
    "dom.text": (args) => textContent(args),
    "dom.wait": (args) => waitForElement(args),
    "dom.fill": (args) => fill(args),
    "storage.get": (args) => storage(args),
    "page.state": () => ({
      url: location.href,
      title: document.title,
      ready_state: document.readyState,
      referrer: document.referrer,
      visibility: document.visibilityState,
      scroll: { x: scrollX, y: scrollY },
      viewport: { width: innerWidth, height: innerHeight },
      elements: document.getElementsByTagName("*").length,
      forms: document.forms.length,
      links: document.links.length,
      console: consoleEntries.slice(-50).map((entry) => ({
        ...entry,
        text: entry.text.slice(0, 300),
      })),
      console_total: consoleEntries.length,
      mutations: { ...mutations, recent: mutations.recent.slice(-20) },
    }),
    "page.ping": () => ({ url: location.href }),
  };

  chrome.runtime.onMessage.addListener((message: unknown, sender, respond) => {
    if (sender.id !== chrome.runtime.id || sender.tab !== undefined) {
      return false;
    }
    if (
      typeof message !== "object" || message === null || !("agentd" in message)
    ) {
      return false;
    }
    const action = actions[String(message.agentd)];
    const args: Args = "args" in message && typeof message.args === "object" &&
        message.args !== null
      ? { ...message.args }
      : {};
    if (!action) {
      respond({
        ok: false,
        error: `Unknown content action ${String(message.agentd)}`,
      });
      return false;
    }
    // Checked here, where the page is: the tab may have navigated to the
    // daemon's page since the background page looked at it.
    const daemon = daemonOf(args);
    if (daemon !== undefined && reachesDaemon(location.href, daemon)) {
      respond({
        ok: false,
        error: daemonPageRefusal("this tab", location.href),
      });
      return false;
    }
    Promise.resolve()
      .then(() => action(args))
      .then(
        (value) => respond({ ok: true, value }),
        (error) =>
          respond({
            ok: false,
            error: error instanceof Error ? error.message : String(error),
          }),
      );
    return true; // the answer comes asynchronously
  });

  chrome.runtime.sendMessage({ type: "content_ready", url: location.href })
    .catch(() => {});
}
