// The aggregate tool catalog: what the gateway lists at /mcp, keyed by
// gateway name, and which group and upstream tool each name calls. Each
// listing's `_meta` names that group and tool (kit/tool_names.ts), so no
// reader splits a name.

import type { Tool } from "../../platform/mcp_sdk.ts";
import type { ToolOverride } from "./config.ts";
import { gatewayName, withOrigin } from "../kit/tool_names.ts";
import { byName, type Upstream } from "./upstream.ts";

export interface CatalogEntry {
  group: string;
  tool: string;
  shortened: boolean;
  listing: Tool;
  /** Arguments from the config's tool_overrides, used when the caller leaves them out. */
  defaults: Readonly<Record<string, unknown>>;
}

export interface CatalogOptions {
  overrides?: Readonly<Record<string, ToolOverride>>;
  /** Two groups produced one gateway name; the first (in name order) keeps it. */
  collided?(name: string, kept: string, dropped: string): void;
}

export type Catalog = ReadonlyMap<string, CatalogEntry>;

/** The aggregate: every tool of every healthy upstream, under its group's prefix, sorted. */
export function buildCatalog(
  upstreams: Iterable<Upstream>,
  options: CatalogOptions = {},
): Catalog {
  const catalog = new Map<string, CatalogEntry>();
  const healthy = [...upstreams]
    .filter((upstream) => upstream.state === "healthy")
    .sort(byName);
  for (const upstream of healthy) {
    for (const tool of upstream.tools) {
      const { name, shortened } = gatewayName(upstream.group, tool.name);
      const taken = catalog.get(name);
      if (taken) {
        // A replica of the same group already listed it; another group is a collision.
        if (taken.group !== upstream.group) {
          options.collided?.(name, taken.group, upstream.group);
        }
        continue;
      }
      const override = options.overrides?.[name];
      if (override?.hidden) continue;
      const defaults = override?.defaults ?? {};
      const listing: Tool = withOrigin({
        ...tool,
        name,
        inputSchema: withDefaults(tool.inputSchema, defaults),
      }, { server: upstream.group, tool: tool.name });
      if (override?.description !== undefined) {
        listing.description = override.description;
      }
      catalog.set(name, {
        group: upstream.group,
        tool: tool.name,
        shortened,
        listing,
        defaults,
      });
    }
  }
  return new Map(
    [...catalog.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/** Gateway names of one upstream's tools. */
export function upstreamListings(upstream: Upstream): Tool[] {
  return upstream.tools.map((tool) =>
    withOrigin(
      { ...tool, name: gatewayName(upstream.group, tool.name).name },
      { server: upstream.group, tool: tool.name },
    )
  );
}

/** The schema as the caller sees it: defaulted arguments are no longer required and carry their default. */
function withDefaults(
  schema: Tool["inputSchema"],
  defaults: Readonly<Record<string, unknown>>,
): Tool["inputSchema"] {
  const keys = Object.keys(defaults);
  if (keys.length === 0) return schema;
  const properties: Record<string, object> = { ...schema.properties };
  for (const key of keys) {
    const property = properties[key];
    properties[key] = {
      ...(typeof property === "object" && property !== null ? property : {}),
      default: defaults[key],
    };
  }
  return {
    ...schema,
    properties,
    required: schema.required?.filter((key) => !keys.includes(key)),
  };
}
