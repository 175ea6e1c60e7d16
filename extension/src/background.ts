// The service worker: holds the native messaging port to `agentd
// native-host` (reconnecting with backoff whenever it drops), runs the
// actions the daemon sends (see actions.ts), observes network requests for
// intercept_network, and relays console output of pages to the daemon.

/// <reference lib="dom" />
/// <reference types="@types/chrome" />

import { type ActionContext, actions } from "./actions.ts";
import type { Json } from "./json.ts";
import { networkLog } from "./network.ts";

const HOST_NAME = "dev.agentd.native_host";
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 15_000;

let port: chrome.runtime.Port | undefined;
let daemonConnected = false;
let reconnectDelay = 0;
let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
let lastError: string | undefined;
const touchedTabs = new Map<
  number,
  { url: string; last_action: string; time: string }
>();

function send(message: Json): void {
  try {
    port?.postMessage(message);
  } catch (error) {
    lastError = String(error);
  }
}

function hello(): void {
  send({
    type: "hello",
    version: chrome.runtime.getManifest().version,
    extension_id: chrome.runtime.id,
    user_agent: navigator.userAgent,
  });
}

function connect(): void {
  if (port) return;
  clearTimeout(reconnectTimer);
  reconnectTimer = undefined;
  let current: chrome.runtime.Port;
  try {
    current = chrome.runtime.connectNative(HOST_NAME);
  } catch (error) {
    lastError = String(error);
    scheduleReconnect();
    return;
  }
  port = current;
  current.onMessage.addListener((message: unknown) => onHostMessage(message));
  current.onDisconnect.addListener(() => {
    lastError = chrome.runtime.lastError?.message ?? "native host disconnected";
    console.warn(`agentd: native host disconnected: ${lastError}`);
    if (port === current) port = undefined;
    daemonConnected = false;
    scheduleReconnect();
  });
  hello();
}

function scheduleReconnect(): void {
  if (reconnectTimer !== undefined) return;
  const delay = reconnectDelay;
  reconnectDelay = Math.min(
    Math.max(delay * 2, RECONNECT_FIRST_MS),
    RECONNECT_MAX_MS,
  );
  reconnectTimer = setTimeout(() => {
    reconnectTimer = undefined;
    connect();
  }, delay);
}

function onHostMessage(message: unknown): void {
  if (typeof message !== "object" || message === null || !("type" in message)) {
    return;
  }
  if (message.type === "daemon" && "state" in message) {
    daemonConnected = message.state === "connected";
    if (daemonConnected) {
      reconnectDelay = 0;
      lastError = undefined;
      hello(); // a (re)started daemon learns who we are
    }
    return;
  }
  if (message.type === "call" && "id" in message && "action" in message) {
    const id = message.id;
    const action = String(message.action);
    const params = "params" in message && typeof message.params === "object" &&
        message.params !== null
      ? { ...message.params }
      : {};
    void run(action, params).then(
      (value) => send({ type: "result", id: toJson(id), ok: true, value }),
      (error) =>
        send({
          type: "result",
          id: toJson(id),
          ok: false,
          error: error instanceof Error ? error.message : String(error),
        }),
    );
  }
}

function toJson(value: unknown): Json {
  return typeof value === "number" || typeof value === "string" ? value : null;
}

const context: ActionContext = {
  touched(tab, action) {
    touchedTabs.set(tab.id ?? -1, {
      url: tab.url ?? "",
      last_action: action,
      time: new Date().toISOString(),
    });
  },
  event: (name, data) => send({ type: "event", name, data }),
  status: () => status(),
};

async function run(
  action: string,
  params: Record<string, unknown>,
): Promise<Json> {
  const handler = actions[action];
  if (!handler) {
    throw new Error(
      `The extension has no action "${action}"; it knows: ${
        Object.keys(actions).join(", ")
      }`,
    );
  }
  return await handler(params, context);
}

function status(): Json {
  return {
    version: chrome.runtime.getManifest().version,
    extension_id: chrome.runtime.id,
    native_host: port ? "connected" : "disconnected",
    daemon: daemonConnected ? "connected" : "disconnected",
    last_error: lastError ?? null,
    touched_tabs: [...touchedTabs.entries()].map(([id, entry]) => ({
      tab_id: id,
      ...entry,
    })),
  };
}

chrome.runtime.onMessage.addListener((message: unknown, sender, respond) => {
  if (sender.id !== chrome.runtime.id) return false;
  if (typeof message !== "object" || message === null || !("type" in message)) {
    return false;
  }
  switch (message.type) {
    case "content_ready":
      send({
        type: "event",
        name: "content_ready",
        data: { tab_id: sender.tab?.id ?? null, url: sender.tab?.url ?? null },
      });
      return false;
    case "console":
      if (
        "entry" in message && typeof message.entry === "object" &&
        message.entry !== null
      ) {
        const entry = { ...message.entry };
        console.log(`agentd page console [tab ${sender.tab?.id}]`, entry);
        send({
          type: "event",
          name: "console",
          data: {
            tab_id: sender.tab?.id ?? null,
            level: "level" in entry ? String(entry.level) : "log",
            text: "text" in entry ? String(entry.text).slice(0, 500) : "",
          },
        });
      }
      return false;
    case "popup_status":
      respond(status());
      return false;
    default:
      return false;
  }
});

// Waking up (an alarm, a page's content script, the popup) reconnects the port.
chrome.alarms.create("agentd-reconnect", { periodInMinutes: 0.5 });
chrome.alarms.onAlarm.addListener(() => connect());
networkLog.listen();
// Readable from the worker's DevTools console (and by tests over CDP).
Reflect.set(globalThis, "agentdStatus", status);
connect();
