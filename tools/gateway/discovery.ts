// Discovery for the gateway's discover_servers: agentd instances announce
// their /mcp in a shared coordination store, and configured loopback ports,
// hosts and networks are probed with an MCP initialize. Nothing outside the
// config (and the announcements of the configured store) is ever contacted;
// found servers are listed, never registered here.

import type { DiscoveryConfig } from "./config.ts";
import type { Logger } from "../../platform/log.ts";
import {
  type JsonValue,
  MAX_LIST_LIMIT,
  scoped,
  type Store,
  StoreError,
  type StoreKey,
} from "../../platform/store.ts";
import { KvStore, openKvStore } from "../../platform/store_kv.ts";
import { messageOf } from "../../platform/errors.ts";
import { VERSION } from "../../platform/version.ts";

export interface Announcement {
  instance: string;
  name: string;
  /** The daemon's MCP endpoint, e.g. http://127.0.0.1:8765/mcp */
  url: string;
  version: string;
  servers: string[];
  /** ISO time. */
  announced_at: string;
  /** ISO time; a record past it is stale (its daemon stopped renewing it). */
  expires_at: string;
}

/** What an announcing daemon supplies; the Announcer adds instance and times. */
export type AnnouncementInfo = Omit<
  Announcement,
  "instance" | "announced_at" | "expires_at"
>;

/** Key prefix of announcements inside the gateway's (scoped) store. */
export const ANNOUNCEMENTS = "announcements";
/** The gateway's namespace; a coordination store is scoped to it like the default store. */
export const GATEWAY_NAMESPACE = "svc-mcp-gateway";
/** A record lives this many intervals, so one missed renewal does not drop it. */
const LIFETIMES = 3;
/**
 * First retry delay after a failed write, doubling up to the interval: a
 * shared KV file answers "database is locked" while another daemon writes,
 * and a first announcement should not wait a whole interval for that.
 */
const FIRST_RETRY_MS = 250;

/** Keeps this daemon's announcement fresh: now, then every interval. */
export class Announcer {
  #store: Store;
  #instance: string;
  #intervalMs: number;
  #log: Logger;
  #info: () => AnnouncementInfo | undefined;
  #clock: () => number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #tick: Promise<void> | undefined;
  #started = false;
  #stopped = false;
  #failures = 0;

  constructor(options: {
    store: Store;
    instance: string;
    interval_ms: number;
    log: Logger;
    /** undefined: nothing to announce yet (e.g. not listening). */
    info: () => AnnouncementInfo | undefined;
    clock?: () => number;
  }) {
    this.#store = options.store;
    this.#instance = options.instance;
    this.#intervalMs = options.interval_ms;
    this.#log = options.log;
    this.#info = options.info;
    this.#clock = options.clock ?? Date.now;
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#run();
  }

  /** Stops renewing and deletes this instance's record (best effort: it expires anyway). */
  async stop(): Promise<void> {
    if (!this.#started || this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    // A write still in flight would otherwise land after the delete.
    await this.#tick;
    try {
      await this.#store.delete([ANNOUNCEMENTS, this.#instance]);
    } catch (error) {
      this.#log.warn("announcement_delete_failed", {
        instance: this.#instance,
        error: messageOf(error),
      });
    }
  }

  #run(): void {
    this.#tick = this.#announce().finally(() => {
      this.#tick = undefined;
      if (!this.#stopped) {
        this.#timer = setTimeout(() => this.#run(), this.#delay());
      }
    });
  }

  async #announce(): Promise<void> {
    try {
      const info = this.#info();
      if (info === undefined) return;
      const now = this.#clock();
      const record: Announcement = {
        instance: this.#instance,
        name: info.name,
        url: info.url,
        version: info.version,
        servers: [...info.servers],
        announced_at: new Date(now).toISOString(),
        expires_at: new Date(now + LIFETIMES * this.#intervalMs).toISOString(),
      };
      await this.#store.set([ANNOUNCEMENTS, this.#instance], toJson(record));
      if (this.#failures > 0) {
        this.#failures = 0;
        this.#log.info("announcement_recovered", { instance: this.#instance });
      }
    } catch (error) {
      this.#failures++;
      this.#log.warn("announcement_failed", {
        instance: this.#instance,
        error: messageOf(error),
        retry_in_ms: this.#delay(),
      });
    }
  }

  #delay(): number {
    if (this.#failures === 0) return this.#intervalMs;
    const backoff = FIRST_RETRY_MS * 2 ** Math.min(this.#failures - 1, 20);
    return Math.min(this.#intervalMs, backoff);
  }
}

function toJson(a: Announcement): JsonValue {
  return {
    instance: a.instance,
    name: a.name,
    url: a.url,
    version: a.version,
    servers: a.servers,
    announced_at: a.announced_at,
    expires_at: a.expires_at,
  };
}

/** Unexpired announcements sorted by url, without `exclude`; stale ones are deleted on the way. */
export async function listAnnouncements(
  store: Store,
  options: { exclude?: string; now?: number },
): Promise<Announcement[]> {
  const now = options.now ?? Date.now();
  const found: Announcement[] = [];
  const stale: { key: StoreKey; version: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list([ANNOUNCEMENTS], {
      limit: MAX_LIST_LIMIT,
      cursor,
    });
    for (const entry of page.entries) {
      const announcement = parseAnnouncement(entry.key, entry.value);
      if (announcement === undefined) continue;
      if (Date.parse(announcement.expires_at) <= now) {
        stale.push({ key: entry.key, version: entry.version });
      } else if (announcement.instance !== options.exclude) {
        found.push(announcement);
      }
    }
    cursor = page.cursor ?? undefined;
  } while (cursor !== undefined);
  // Checked at the version read, so a record renewed meanwhile survives.
  await Promise.all(stale.map(({ key, version }) =>
    store.commit({
      checks: [{ key, version }],
      mutations: [{ type: "delete", key }],
    }).catch(() => {})
  ));
  return found.sort((a, b) =>
    compare(a.url, b.url) || compare(a.instance, b.instance)
  );
}

function parseAnnouncement(
  key: StoreKey,
  value: JsonValue,
): Announcement | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return undefined;
  }
  const text = (name: string): string | undefined => {
    const field = value[name];
    return typeof field === "string" ? field : undefined;
  };
  const instance = text("instance");
  const name = text("name");
  const url = text("url");
  const version = text("version");
  const announcedAt = text("announced_at");
  const expiresAt = text("expires_at");
  const servers = value.servers;
  if (
    instance === undefined || key.length !== 2 || key[1] !== instance ||
    name === undefined || url === undefined || !isHttpUrl(url) ||
    version === undefined || announcedAt === undefined ||
    expiresAt === undefined || Number.isNaN(Date.parse(expiresAt)) ||
    !Array.isArray(servers)
  ) return undefined;
  const names: string[] = [];
  for (const server of servers) {
    if (typeof server !== "string") return undefined;
    names.push(server);
  }
  return {
    instance,
    name,
    url,
    version,
    servers: names,
    announced_at: announcedAt,
    expires_at: expiresAt,
  };
}

export interface ProbeResult {
  url: string;
  reachable: boolean;
  server_name?: string;
  server_version?: string;
  protocol_version?: string;
  latency_ms: number;
  error?: string;
}

const PROTOCOL_VERSION = "2025-11-25";
const INITIALIZE_ID = 1;
/** Larger answers to initialize are not worth reading. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** The session DELETE is a courtesy: never wait longer than this for it. */
const CLOSE_TIMEOUT_MS = 1000;

/**
 * Sends one MCP initialize to `url` and reports what answered. The whole
 * exchange (connect, headers, body) is bounded by `timeoutMs`; redirects are
 * not followed, so only the configured address is ever contacted.
 */
export async function probeMcp(
  url: string,
  timeoutMs: number,
  fetchFn: typeof fetch = fetch,
): Promise<ProbeResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  let session: string | null = null;
  let result: ProbeResult;
  try {
    const response = await fetchFn(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: INITIALIZE_ID,
        method: "initialize",
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "agentd-discovery", version: VERSION },
        },
      }),
      redirect: "manual",
      signal: controller.signal,
    });
    session = response.headers.get("mcp-session-id");
    const answer = await readAnswer(response);
    result = typeof answer === "string"
      ? { url, reachable: false, latency_ms: elapsed(), error: answer }
      : { url, ...initializeOutcome(answer), latency_ms: elapsed() };
  } catch (error) {
    result = {
      url,
      reachable: false,
      latency_ms: elapsed(),
      error: timedOut
        ? `timed out after ${timeoutMs} ms`
        : describeFailure(error),
    };
  } finally {
    clearTimeout(timer);
  }
  if (session !== null) {
    await closeSession(url, session, result.protocol_version, fetchFn);
  }
  return result;
}

/** The answer's JSON-RPC message, or why there is none (as the probe's error). */
async function readAnswer(response: Response): Promise<unknown> {
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => {});
    const location = response.headers.get("location");
    return location === null
      ? `HTTP ${response.status}`
      : `HTTP ${response.status} (redirect to ${cut(location)} not followed)`;
  }
  const type = (response.headers.get("content-type") ?? "").split(";")[0]
    .trim().toLowerCase();
  if (type === "application/json") {
    const text = await readText(response.body);
    if (text === undefined) return notMcp("answer larger than 1 MiB");
    try {
      return JSON.parse(text);
    } catch {
      return notMcp("answered invalid JSON");
    }
  }
  if (type === "text/event-stream") {
    const message = response.body && await firstSseAnswer(response.body);
    return message ?? notMcp("the event stream held no answer to initialize");
  }
  await response.body?.cancel().catch(() => {});
  return notMcp(
    type === "" ? "answered without a content type" : `answered ${cut(type)}`,
  );
}

async function readText(
  body: ReadableStream<Uint8Array> | null,
): Promise<string | undefined> {
  if (body === null) return "";
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > MAX_ANSWER_BYTES) return undefined; // leaving the loop cancels the body
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

/** The first `data:` message of the stream that answers our initialize. */
async function firstSseAnswer(
  body: ReadableStream<Uint8Array>,
): Promise<unknown> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > MAX_ANSWER_BYTES) return undefined;
    buffer += decoder.decode(chunk, { stream: true });
    // A lone trailing CR may be half of a CRLF: wait for the next chunk.
    const end = buffer.endsWith("\r") ? buffer.length - 1 : buffer.length;
    const lines = buffer.slice(0, end).split(/\r\n|\r|\n/);
    buffer = (lines.pop() ?? "") + buffer.slice(end);
    for (const line of lines) {
      if (line === "") {
        const message = parseMessage(data.join("\n"));
        data = [];
        if (isAnswer(message)) return message; // leaving the loop cancels the stream
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
    }
  }
  return undefined;
}

function parseMessage(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isAnswer(message: unknown): boolean {
  return typeof message === "object" && message !== null &&
    "id" in message && message.id === INITIALIZE_ID;
}

type Outcome = Omit<ProbeResult, "url" | "latency_ms">;

function initializeOutcome(message: unknown): Outcome {
  if (
    typeof message !== "object" || message === null ||
    !("jsonrpc" in message) || message.jsonrpc !== "2.0" || !isAnswer(message)
  ) {
    return {
      reachable: false,
      error: notMcp("no JSON-RPC answer to initialize"),
    };
  }
  if ("error" in message) {
    const error = message.error;
    const text = typeof error === "object" && error !== null &&
        "message" in error && typeof error.message === "string"
      ? error.message
      : JSON.stringify(error);
    return { reachable: false, error: `initialize failed: ${cut(text)}` };
  }
  const result = "result" in message ? message.result : undefined;
  if (typeof result !== "object" || result === null) {
    return { reachable: false, error: notMcp("initialize had no result") };
  }
  const info = "serverInfo" in result ? result.serverInfo : undefined;
  const protocol = "protocolVersion" in result
    ? result.protocolVersion
    : undefined;
  if (
    typeof info !== "object" || info === null || !("name" in info) ||
    typeof info.name !== "string" || typeof protocol !== "string"
  ) {
    return {
      reachable: false,
      error: notMcp("initialize result lacks serverInfo or protocolVersion"),
    };
  }
  const version = "version" in info && typeof info.version === "string"
    ? info.version
    : undefined;
  return {
    reachable: true,
    server_name: cut(info.name),
    ...(version === undefined ? {} : { server_version: cut(version) }),
    protocol_version: cut(protocol),
  };
}

/** Ends the session the probe opened, so probing leaves nothing behind. */
async function closeSession(
  url: string,
  session: string,
  protocol: string | undefined,
  fetchFn: typeof fetch,
): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), CLOSE_TIMEOUT_MS);
  try {
    const response = await fetchFn(url, {
      method: "DELETE",
      headers: {
        "Mcp-Session-Id": session,
        ...(protocol === undefined ? {} : { "Mcp-Protocol-Version": protocol }),
      },
      redirect: "manual",
      signal: controller.signal,
    });
    await response.body?.cancel();
  } catch {
    // Best effort: the server expires idle sessions on its own.
  } finally {
    clearTimeout(timer);
  }
}

const FAILURES: [RegExp, string][] = [
  [/connection refused/i, "connection refused"],
  [
    /dns error|failed to lookup|name or service not known|no such host/i,
    "host not found",
  ],
  [/connection reset/i, "connection reset"],
  [/network is unreachable|no route to host/i, "network unreachable"],
  [/certificate|tls|ssl|handshake/i, "TLS handshake failed"],
];

/** Deno's fetch says "fetch failed" and hides the reason in a chain of causes. */
function describeFailure(error: unknown): string {
  const messages: string[] = [];
  for (let e = error; e !== undefined && messages.length < 5;) {
    messages.push(messageOf(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  const all = messages.join("; ");
  for (const [pattern, text] of FAILURES) {
    if (pattern.test(all)) return text;
  }
  const inner = messages[messages.length - 1] ?? "unknown error";
  return cut(inner.replace(/^error sending request for url \([^)]*\): /, ""));
}

function notMcp(why: string): string {
  return `not an MCP server: ${why}`;
}

function cut(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface DiscoveryTarget {
  url: string;
  /** "announcement" | "loopback" | "hosts" | <network name> */
  source: string;
  announcement?: Announcement;
}

const BUILTIN_NETWORKS = ["store", "loopback", "hosts"];

/**
 * The URLs one discover_servers call probes: every configured source when
 * `network` is undefined, else the one chosen. De-duplicated by URL, first
 * source winning. Built-in choices shadow networks of the same name.
 */
export function targets(
  config: DiscoveryConfig,
  network: string | undefined,
  announcements: Announcement[],
): DiscoveryTarget[] {
  const names = Object.keys(config.networks).sort(compare);
  if (network !== undefined && !BUILTIN_NETWORKS.includes(network)) {
    if (!Object.hasOwn(config.networks, network)) {
      const choices = [...BUILTIN_NETWORKS, ...names].join(", ");
      throw new Error(
        `Unknown network "${network}": choose one of ${choices}, or omit it to search all of them`,
      );
    }
  }
  const wanted = (name: string) => network === undefined || network === name;
  const found: DiscoveryTarget[] = [];
  if (wanted("store")) {
    for (const announcement of announcements) {
      if (!isHttpUrl(announcement.url)) continue; // not ours to reject
      found.push({
        url: announcement.url,
        source: "announcement",
        announcement,
      });
    }
  }
  if (wanted("loopback")) {
    for (const port of config.ports) {
      found.push({ url: `http://127.0.0.1:${port}/mcp`, source: "loopback" });
    }
  }
  if (wanted("hosts")) {
    for (const entry of config.hosts) {
      found.push({ url: entryUrl(entry, "hosts"), source: "hosts" });
    }
  }
  for (const name of names) {
    if (BUILTIN_NETWORKS.includes(name) || !wanted(name)) continue;
    for (const entry of config.networks[name]) {
      found.push({ url: entryUrl(entry, `networks.${name}`), source: name });
    }
  }
  const seen = new Set<string>();
  return found.filter((target) => {
    const key = new URL(target.url).href;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const HOST_PORT =
  /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

/** `host:port` → `http://host:port/mcp`; an http(s) URL as given. */
function entryUrl(entry: string, where: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) {
    if (isHttpUrl(entry)) return entry;
  } else {
    const match = HOST_PORT.exec(entry);
    const port = Number(match?.[2]);
    if (match && port >= 1 && port <= 65535) {
      const url = `http://${match[1]}:${port}/mcp`;
      if (URL.canParse(url)) return url;
    }
  }
  throw new Error(
    `Invalid discovery entry "${entry}" in ${where}: expected host:port (e.g. 127.0.0.1:3001 or [::1]:3001) or an http(s) URL`,
  );
}

function isHttpUrl(text: string): boolean {
  const url = URL.parse(text);
  return url !== null &&
    (url.protocol === "http:" || url.protocol === "https:");
}

export type DiscoveredServer = ProbeResult & {
  source: string;
  announced_by?: string;
};

const PROBE_CONCURRENCY = 16;

/** Lists announcements (not our own), probes every target and reports them by url. */
export async function discover(options: {
  config: DiscoveryConfig;
  store: Store;
  instance: string;
  network?: string;
  fetchFn?: typeof fetch;
  now?: number;
}): Promise<{ network: string; servers: DiscoveredServer[] }> {
  const { config, network } = options;
  // Validates the choice before touching the store.
  targets(config, network, []);
  const announcements = network === undefined || network === "store"
    ? await listAnnouncements(options.store, {
      exclude: options.instance,
      now: options.now,
    })
    : [];
  const queue = targets(config, network, announcements);
  const servers: DiscoveredServer[] = [];
  const worker = async () => {
    for (let target = queue.shift(); target; target = queue.shift()) {
      const probe = await probeMcp(
        target.url,
        config.probe_timeout_ms,
        options.fetchFn,
      );
      servers.push({
        ...probe,
        source: target.source,
        ...(target.announcement
          ? { announced_by: target.announcement.instance }
          : {}),
      });
    }
  };
  await Promise.all(
    Array.from(
      { length: Math.min(PROBE_CONCURRENCY, queue.length) },
      worker,
    ),
  );
  servers.sort((a, b) => compare(a.url, b.url));
  return { network: network ?? "all", servers };
}

/**
 * The store announcements go to: `spec` undefined is the daemon's own store;
 * a path opens a Deno KV file, an http(s) URL a KV Connect database (token in
 * DENO_KV_ACCESS_TOKEN). Either is scoped to the gateway's namespace, so a
 * daemon naming the KV file another one uses as its default store meets it.
 */
export async function openCoordinationStore(
  spec: string | undefined,
  fallback: Store,
  env: Readonly<Record<string, string>>,
): Promise<{ store: Store; close(): Promise<void> }> {
  if (spec === undefined) return { store: fallback, close: async () => {} };
  const opened = /^[a-z][a-z0-9+.-]*:\/\//i.test(spec)
    ? await openKvConnectStore(spec, env)
    : await openKvStore(spec);
  const store = scoped(opened, [GATEWAY_NAMESPACE]);
  return {
    store,
    async close() {
      await store.close();
      await opened.close();
    },
  };
}

async function openKvConnectStore(
  url: string,
  env: Readonly<Record<string, string>>,
): Promise<Store> {
  const parsed = URL.parse(url);
  if (
    parsed === null ||
    (parsed.protocol !== "https:" && parsed.protocol !== "http:")
  ) {
    throw new StoreError(
      `Cannot open the coordination store ${
        cut(url.replace(/\?.*$/, ""), 80)
      }: use a Deno KV file path or an https:// KV Connect URL`,
    );
  }
  const where = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  const token = env.DENO_KV_ACCESS_TOKEN;
  if (token === undefined || token === "") {
    throw new StoreError(
      `Cannot open the coordination store at ${where}: set DENO_KV_ACCESS_TOKEN to its access token`,
    );
  }
  // Deno reads the KV Connect access token from the process environment only.
  if (Deno.env.get("DENO_KV_ACCESS_TOKEN") !== token) {
    Deno.env.set("DENO_KV_ACCESS_TOKEN", token);
  }
  try {
    return new KvStore(await Deno.openKv(url));
  } catch (error) {
    throw new StoreError(
      `Cannot open the coordination store at ${where}: ${
        describeFailure(error)
      }`,
      { cause: error },
    );
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
