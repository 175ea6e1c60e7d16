// The aggregate tool catalog: what the gateway lists at /mcp, keyed by
// gateway name, and which group and upstream tool each name calls.

import type { Tool } from "../../platform/mcp_sdk.ts";
import { gatewayName } from "./naming.ts";
import { byName, type Upstream } from "./upstream.ts";

export interface CatalogEntry {
  group: string;
  tool: string;
  shortened: boolean;
  listing: Tool;
}

export type Catalog = ReadonlyMap<string, CatalogEntry>;

/** The aggregate: every tool of every healthy upstream, under its group's prefix, sorted. */
export function buildCatalog(upstreams: Iterable<Upstream>): Catalog {
  const catalog = new Map<string, CatalogEntry>();
  const healthy = [...upstreams]
    .filter((upstream) => upstream.state === "healthy")
    .sort(byName);
  for (const upstream of healthy) {
    for (const tool of upstream.tools) {
      const { name, shortened } = gatewayName(upstream.group, tool.name);
      if (catalog.has(name)) continue; // a replica already listed it
      const listing: Tool = { ...tool, name };
      catalog.set(name, {
        group: upstream.group,
        tool: tool.name,
        shortened,
        listing,
      });
    }
  }
  return new Map(
    [...catalog.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/** Gateway names of one upstream's tools. */
export function listingOf(upstream: Upstream): Tool[] {
  return upstream.tools.map((tool) => ({
    ...tool,
    name: gatewayName(upstream.group, tool.name).name,
  }));
}
