// The gateway's config section (`gateway` in agentd.json): upstream servers,
// health checks, balancing, alerts and discovery; and how a configured
// upstream is reached.

import { z } from "zod";
import type { Logger } from "../../platform/log.ts";
import type { UpstreamTarget } from "./upstream.ts";

/** Upstream names are tool-name prefixes: short, lower case, no `__`. */
export const UPSTREAM_NAME = /^[a-z0-9](?:[a-z0-9-]|_(?!_)){0,39}$/;

export const UpstreamName = z.string().regex(
  UPSTREAM_NAME,
  "1-40 characters: lower-case letters, digits, '-' and single '_', starting with a letter or digit",
);

export const UpstreamConfig = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).optional()
    .describe(
      "Streamable HTTP endpoint of the upstream, e.g. http://127.0.0.1:3001/mcp",
    ),
  command: z.string().min(1).optional()
    .describe(
      "Executable of a stdio upstream (started and restarted by the gateway)",
    ),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({})
    .describe(
      "Extra environment of a stdio upstream (the gateway's own is not passed on)",
    ),
  cwd: z.string().min(1).optional(),
  headers: z.record(z.string(), z.string()).default({})
    .describe(
      "Sent with every request to an HTTP upstream (credentials for that upstream)",
    ),
  token_env: z.string().min(1).optional()
    .describe(
      "Environment variable holding a bearer token sent to this HTTP upstream",
    ),
  pass_through_auth: z.boolean().default(false)
    .describe(
      "Forward the caller's own Authorization header to this upstream (off: see README)",
    ),
  group: UpstreamName.optional()
    .describe(
      "Replica group: upstreams of one group serve the same tools under the group's prefix",
    ),
  tools: z.array(z.string().min(1)).min(1).optional()
    .describe("Only these tools of the upstream are exposed"),
}).refine(
  (value) => (value.url === undefined) !== (value.command === undefined),
  {
    message:
      "give exactly one of url (HTTP upstream) or command (stdio upstream)",
  },
);
export type UpstreamConfig = z.output<typeof UpstreamConfig>;

export const DiscoveryConfig = z.strictObject({
  ports: z.array(z.number().int().min(1).max(65535)).default([])
    .describe(
      "Loopback ports probed for MCP endpoints (http://127.0.0.1:<port>/mcp)",
    ),
  hosts: z.array(z.string().min(1)).default([])
    .describe("host:port pairs or URLs probed for MCP endpoints"),
  networks: z.record(z.string().min(1), z.array(z.string().min(1))).default({})
    .describe(
      "Named lists of host:port pairs or URLs, chosen by discover_servers(network)",
    ),
  store: z.string().min(1).optional()
    .describe(
      "Coordination store where agentd instances announce themselves: a Deno KV path, KV Connect URL or postgres:// URL (default: the daemon's store)",
    ),
  announce: z.boolean().default(true)
    .describe("Announce this daemon's /mcp in the coordination store"),
  interval_ms: z.number().int().min(1000).max(3_600_000).default(30_000)
    .describe("How often announcements are renewed (and auto_register runs)"),
  auto_register: z.union([z.boolean(), z.array(z.string().min(1))])
    .default(["store", "loopback"])
    .describe(
      "What the running gateway adds by itself every interval_ms: a list of sources (store, loopback, hosts, a network name), " +
        "true for all of them, false for none. Default: the servers of daemons announced in the store and the loopback ports; " +
        "other hosts only when named",
    ),
  probe_timeout_ms: z.number().int().min(50).max(30_000).default(1500),
}).superRefine((value, ctx) => {
  if (!Array.isArray(value.auto_register)) return;
  const known = ["store", "loopback", "hosts", ...Object.keys(value.networks)];
  value.auto_register.forEach((source, index) => {
    if (!known.includes(source)) {
      ctx.addIssue({
        code: "custom",
        path: ["auto_register", index],
        message: `unknown source "${source}": choose among ${known.join(", ")}`,
      });
    }
  });
});
export type DiscoveryConfig = z.output<typeof DiscoveryConfig>;

export const ToolOverride = z.strictObject({
  description: z.string().min(1).max(4000).optional()
    .describe("Replaces the upstream's description of the tool"),
  hidden: z.boolean().default(false)
    .describe("Neither listed nor callable through the gateway"),
  defaults: z.record(z.string(), z.unknown()).default({})
    .describe(
      "Arguments used when the caller leaves them out (no longer required in the listed schema)",
    ),
});
export type ToolOverride = z.output<typeof ToolOverride>;

export const ToolsMode = z.enum(["all", "on_demand"]);
export type ToolsMode = z.output<typeof ToolsMode>;

export const GatewayConfig = z.strictObject({
  tools_mode: ToolsMode.default("all")
    .describe(
      "What tools/list shows: every tool, or on_demand (search_tools, describe_tool, call_tool); " +
        "a client may choose for itself with the io.agentd/tools experimental capability",
    ),
  tool_overrides: z.record(z.string().min(1), ToolOverride).default({})
    .describe(
      "Per gateway tool name (<server>__<tool>): description, hidden, default arguments",
    ),
  upstreams: z.record(UpstreamName, UpstreamConfig).default({})
    .describe("Upstream MCP servers by name (prefix of their tools)"),
  health_interval_ms: z.number().int().min(100).max(3_600_000).default(15_000)
    .describe("How often every upstream is health-checked"),
  connect_timeout_ms: z.number().int().min(100).max(600_000).default(20_000)
    .describe("Longest an upstream may take to start and answer initialize"),
  health_timeout_ms: z.number().int().min(50).max(60_000).default(5000)
    .describe("Longest a ping or an upstream's whole tools/list may take"),
  store_timeout_ms: z.number().int().min(50).max(600_000).default(10_000)
    .describe(
      "Longest one read or write of the store may take (registrations, announcements)",
    ),
  dns_timeout_ms: z.number().int().min(50).max(60_000).default(2000)
    .describe(
      "Longest register_server waits for the DNS to answer its link-local check",
    ),
  call_timeout_ms: z.number().int().min(100).max(3_600_000).default(60_000)
    .describe(
      "Longest a routed tools/call may go without an answer or a progress notification",
    ),
  call_max_ms: z.number().int().min(100).max(86_400_000).default(1_800_000)
    .describe(
      "Longest a routed tools/call may take in all, even while it reports progress",
    ),
  broadcast_timeout_ms: z.number().int().min(100).max(600_000).default(10_000)
    .describe("Per-upstream timeout of broadcast_tool_call"),
  balance: z.enum(["round_robin", "least_in_flight"]).default("round_robin")
    .describe("How calls are spread over the healthy replicas of a group"),
  alert_webhook: z.url({ protocol: /^https?$/ }).optional()
    .describe("Upstream down/recovered alerts are POSTed here as JSON"),
  discovery: DiscoveryConfig.prefault({}),
});
export type GatewayConfig = z.output<typeof GatewayConfig>;

/** How to reach a configured upstream; its credentials are added to the log's secrets. */
export function upstreamTarget(
  name: string,
  entry: UpstreamConfig,
  options: { env: Readonly<Record<string, string>>; log: Logger },
): UpstreamTarget {
  return entry.url !== undefined
    ? {
      kind: "http",
      // Normalised, so that comparisons with registered URLs hold.
      url: new URL(entry.url).href,
      headers: headersOf(name, entry.headers, entry.token_env, options),
      passThroughAuth: entry.pass_through_auth,
    }
    : {
      kind: "stdio",
      command: entry.command ?? "",
      args: entry.args,
      env: entry.env,
      cwd: entry.cwd,
    };
}

function headersOf(
  name: string,
  headers: Readonly<Record<string, string>>,
  tokenEnv: string | undefined,
  options: { env: Readonly<Record<string, string>>; log: Logger },
): Record<string, string> {
  const merged: Record<string, string> = { ...headers };
  if (tokenEnv !== undefined) {
    const token = options.env[tokenEnv];
    if (!token) {
      throw new Error(
        `gateway.upstreams.${name}.token_env: ${tokenEnv} is not set`,
      );
    }
    options.log.addSecret(token);
    merged.Authorization = `Bearer ${token}`;
  }
  for (const value of Object.values(merged)) options.log.addSecret(value);
  return merged;
}
