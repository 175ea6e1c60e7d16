// Announcements: agentd daemons keep a record of their /mcp in a shared
// coordination store (a Deno KV file or KV Connect database) for others to find.

import type { Logger } from "../../platform/log.ts";
import {
  type JsonValue,
  MAX_LIST_LIMIT,
  scoped,
  type Store,
  StoreError,
  type StoreKey,
} from "../../platform/store/mod.ts";
import { KvStore, openKvStore } from "../../platform/store/kv.ts";
import { openKvConnect } from "../../platform/store/kv_connect.ts";
import { isPostgresUrl, openStoreAt } from "../../platform/store/open.ts";
import { messageOf } from "../../platform/errors.ts";
import { cut, describeFailure } from "./failures.ts";

export interface Announcement {
  instance: string;
  name: string;
  /** The daemon's MCP endpoint, e.g. http://127.0.0.1:8765/mcp */
  url: string;
  version: string;
  servers: string[];
  /** The servers this daemon hosts itself, each at `<url>/<id>` (absent when none). */
  hosted?: string[];
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
        ...(info.hosted?.length ? { hosted: [...info.hosted] } : {}),
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
    ...(a.hosted ? { hosted: a.hosted } : {}),
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
  // Only ids that make one path segment: they are appended to the URL.
  const hosted = Array.isArray(value.hosted)
    ? value.hosted.flatMap((id) =>
      typeof id === "string" && /^[a-z0-9][a-z0-9_-]{0,63}$/.test(id)
        ? [id]
        : []
    )
    : undefined;
  return {
    instance,
    name,
    url,
    version,
    servers: names,
    ...(hosted ? { hosted } : {}),
    announced_at: announcedAt,
    expires_at: expiresAt,
  };
}

/**
 * The store announcements go to: `spec` undefined is the daemon's own store;
 * a path opens a Deno KV file, an http(s) URL a KV Connect database (token in
 * DENO_KV_ACCESS_TOKEN), a postgres:// URL a PostgreSQL store (the opener
 * every daemon store uses). Either is scoped to the gateway's namespace, so a
 * daemon naming the KV file another one uses as its default store meets it.
 */
export async function openCoordinationStore(
  spec: string | undefined,
  fallback: Store,
  env: Readonly<Record<string, string>>,
): Promise<{ store: Store; close(): Promise<void> }> {
  if (spec === undefined) return { store: fallback, close: async () => {} };
  const opened = isPostgresUrl(spec)
    ? await openStoreAt({ store: spec, dataDir: "" })
    : /^[a-z][a-z0-9+.-]*:\/\//i.test(spec)
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
  try {
    return new KvStore(await openKvConnect(url, token));
  } catch (error) {
    throw new StoreError(
      `Cannot open the coordination store at ${where}: ${
        describeFailure(error)
      }`,
      { cause: error },
    );
  }
}

export function isHttpUrl(text: string): boolean {
  const url = URL.parse(text);
  return url !== null &&
    (url.protocol === "http:" || url.protocol === "https:");
}

/** Code-unit order: the same on every machine, unlike localeCompare. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
