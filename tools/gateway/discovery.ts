// Discovery for the gateway's discover_servers: agentd instances announce
// their /mcp in a shared coordination store, and configured loopback ports,
// hosts and networks are probed with an MCP initialize. Nothing outside the
// config (and the announcements of the configured store) is ever contacted;
// found servers are listed, never registered here. The records are in
// announcements.ts, the initialize probe in probe.ts.

import type { DiscoveryConfig } from "./config.ts";
import { messageOf } from "../../platform/errors.ts";
import type { JsonValue, Store } from "../../platform/store/mod.ts";
import { ToolError } from "../kit/mod.ts";
import {
  type Announcement,
  compare,
  isHttpUrl,
  listAnnouncements,
} from "./announcements.ts";
import { probeMcp, type ProbeResult } from "./probe.ts";
import type { Upstream } from "./upstream.ts";

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
 * discover_servers' answer: discover() without our own /mcp (`selfUrl`),
 * each server with the upstream registered at its URL (or null).
 */
export async function discoverServers(options: {
  config: DiscoveryConfig;
  store: Store;
  instance: string;
  selfUrl(): string | undefined;
  upstreams: ReadonlyMap<string, Upstream>;
  network?: string;
  fetchFn?: typeof fetch;
}): Promise<{ [key: string]: JsonValue }> {
  let report;
  try {
    report = await discover({
      config: options.config,
      store: options.store,
      instance: options.instance,
      network: options.network,
      fetchFn: options.fetchFn,
    });
  } catch (error) {
    throw new ToolError(messageOf(error));
  }
  const self = options.selfUrl();
  const byUrl = new Map<string, string>();
  for (const upstream of options.upstreams.values()) {
    if (upstream.target.kind === "http") {
      byUrl.set(upstream.target.url, upstream.name);
    }
  }
  const servers = report.servers
    .filter((server) => server.url !== self)
    .map((server) => ({
      ...server,
      registered_as: byUrl.get(new URL(server.url).href) ?? null,
    }));
  return {
    network: report.network,
    servers,
    reachable: servers.filter((server) => server.reachable).length,
  };
}
