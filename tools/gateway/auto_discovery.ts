// Auto-discovery while running: what the gateway adds by itself each
// discovery interval. By default only what needs no network scan: the servers
// other agentd daemons host themselves (announced in the shared store) and
// MCP servers on the configured loopback ports. Other hosts and networks are
// probed only when `discovery.auto_register` names them (or is true).

import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import type { Store } from "../../platform/store/mod.ts";
import { listAnnouncements } from "./announcements.ts";
import type { DiscoveryConfig } from "./config.ts";
import { discover } from "./discovery.ts";
import type { Upstream } from "./upstream.ts";

export interface AutoDiscoveryOptions {
  intervalMs: number;
  /** True once the daemon's own URL is known (it is then never added). */
  listening(): boolean;
  round(): Promise<void>;
  log: Logger;
}

/** Rounds one at a time: the first once the daemon listens, then every interval. */
export class AutoDiscovery {
  readonly #options: AutoDiscoveryOptions;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #interval: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;

  constructor(options: AutoDiscoveryOptions) {
    this.#options = options;
  }

  start(): void {
    // On stdio there is no URL: the first round then comes after a second.
    let tries = 0;
    const first = () => {
      if (!this.#options.listening() && tries++ < 20) {
        this.#timer = setTimeout(first, 50);
      } else {
        this.#run();
      }
    };
    first();
    this.#interval = setInterval(() => this.#run(), this.#options.intervalMs);
  }

  #run(): void {
    this.#running ??= this.#options.round().catch((error) =>
      this.#options.log.warn("auto_discovery_failed", {
        error: messageOf(error),
      })
    ).finally(() => {
      this.#running = undefined;
    });
  }

  /** No more rounds; resolves when a running one has ended. */
  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    clearInterval(this.#interval);
    await this.#running;
  }
}

/** A server to add: where it is and the name it would like. */
export interface Candidate {
  url: string;
  name: string;
}

/** The sources `auto_register` selects: true is every configured one, false none. */
export function autoNetworks(config: DiscoveryConfig): string[] {
  const choice = config.auto_register;
  if (choice === false) return [];
  if (choice === true) {
    return ["store", "loopback", "hosts", ...Object.keys(config.networks)];
  }
  return [...choice];
}

/** Upstream names are at most 40 characters; room is kept for a `-NN` suffix. */
const NAME_ROOM = 36;

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-").replace(/^-+|-+$/g, "");
}

/**
 * This round's candidates, de-duplicated by URL. An announced daemon is
 * never added whole: its `/mcp` aggregates what it found, and two daemons
 * adding each other's aggregate would list each other's tools without end.
 * Its own servers (`hosted`, each at `<url>/<id>`) are added instead.
 */
export async function autoCandidates(options: {
  networks: readonly string[];
  config: DiscoveryConfig;
  store: Store;
  instance: string;
  fetchFn?: typeof fetch;
}): Promise<Candidate[]> {
  const found: Candidate[] = [];
  if (options.networks.includes("store")) {
    const announcements = await listAnnouncements(options.store, {
      exclude: options.instance,
    });
    for (const announcement of announcements) {
      const daemon = slug(announcement.name) || "agentd";
      for (const id of announcement.hosted ?? []) {
        const room = Math.max(1, NAME_ROOM - id.length - 1);
        found.push({
          url: `${announcement.url}/${encodeURIComponent(id)}`,
          name: `${daemon.slice(0, room).replace(/-+$/, "")}-${id}`,
        });
      }
    }
  }
  for (const network of options.networks) {
    if (network === "store") continue;
    const report = await discover({
      config: options.config,
      store: options.store,
      instance: options.instance,
      network,
      fetchFn: options.fetchFn,
    });
    for (const server of report.servers) {
      if (!server.reachable) continue;
      found.push({
        url: server.url,
        name: slug(server.server_name ?? "") || "discovered",
      });
    }
  }
  const seen = new Set<string>();
  return found.filter((candidate) => {
    const key = new URL(candidate.url).href;
    if (seen.has(key)) return false;
    seen.add(key);
    candidate.url = key;
    return true;
  });
}

/** `wanted`, made a valid upstream name and numbered while `taken`. */
export function freeName(
  wanted: string,
  taken: (name: string) => boolean,
): string {
  const base = slug(wanted).slice(0, NAME_ROOM).replace(/-+$/, "") ||
    "discovered";
  let name = base;
  for (let n = 2; taken(name); n++) name = `${base}-${n}`;
  return name;
}

/**
 * Applies one round to the upstreams: discovered ones no longer found leave;
 * found ones not yet served (and not this daemon: `self` and below) are
 * added as `discovered` and connected. True when anything changed.
 */
export async function applyDiscovered(
  candidates: readonly Candidate[],
  options: {
    self: string | undefined;
    upstreams: Map<string, Upstream>;
    taken(name: string): boolean;
    create(name: string, url: string): Upstream;
    log: Logger;
  },
): Promise<boolean> {
  const { self, upstreams, log } = options;
  const found = candidates.filter((candidate) =>
    self === undefined ||
    (candidate.url !== self && !candidate.url.startsWith(`${self}/`))
  );
  const urls = new Set(found.map((candidate) => candidate.url));
  let changed = false;
  for (const upstream of [...upstreams.values()]) {
    if (
      upstream.source === "discovered" && upstream.target.kind === "http" &&
      !urls.has(upstream.target.url)
    ) {
      upstreams.delete(upstream.name);
      await upstream.close();
      log.info("undiscovered", { upstream: upstream.name });
      changed = true;
    }
  }
  const served = new Set(
    [...upstreams.values()].flatMap((upstream) =>
      upstream.target.kind === "http" ? [upstream.target.url] : []
    ),
  );
  for (const candidate of found) {
    if (served.has(candidate.url)) continue;
    const name = freeName(candidate.name, options.taken);
    const upstream = options.create(name, candidate.url);
    upstreams.set(name, upstream);
    log.info("discovered", { upstream: name, url: candidate.url });
    await upstream.connect().catch(() => {});
    changed = true;
  }
  return changed;
}
