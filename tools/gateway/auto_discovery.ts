// Auto-discovery while running: what the gateway adds by itself each
// discovery interval. By default only what needs no network scan: the servers
// other agentd daemons host themselves (announced in the shared store) and
// MCP servers on the configured loopback ports. Other hosts and networks are
// probed only when `discovery.auto_register` names them (or is true).

import type { Store } from "../../platform/store.ts";
import { listAnnouncements } from "./announcements.ts";
import type { DiscoveryConfig } from "./config.ts";
import { discover } from "./discovery.ts";

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
