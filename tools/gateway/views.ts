// What the gateway reports about itself: the /admin view (each upstream's row
// of it too), the /health body and the Prometheus metrics, each computed
// from the upstreams and catalog.

import type { Caller } from "../../platform/identity.ts";
import type { Metric } from "../../platform/metrics.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { VERSION } from "../../platform/version.ts";
import type { AdminServer, AdminTool, AdminView } from "./admin_view.ts";
import type { Catalog } from "./catalog.ts";
import type { GatewayConfig } from "./config.ts";
import type { UpstreamTarget } from "./transports.ts";
import { byName, type Upstream } from "./upstream.ts";

export function adminViewOf(
  upstreams: Iterable<Upstream>,
  options: {
    catalog: Catalog;
    /** Tools of the daemon's own beside the upstreams' (agents__send, teams__execute). */
    local?: readonly AdminTool[];
    config: GatewayConfig;
    now: number;
    viewer: Caller;
  },
): AdminView {
  const { catalog, config } = options;
  const tools: AdminTool[] = [
    ...[...catalog.entries()].map(([name, entry]) => ({
      name,
      group: entry.group,
      tool: entry.tool,
      shortened: entry.shortened,
      description: entry.listing.description ?? "",
    })),
    ...options.local ?? [],
  ].sort(byName);
  return {
    generated_at: new Date(options.now).toISOString(),
    version: VERSION,
    health_interval_ms: config.health_interval_ms,
    balance: config.balance,
    servers: [...upstreams]
      .sort(byName)
      .map((upstream) => serverView(upstream, options.viewer)),
    tools,
  };
}

/** Where an upstream is: in-process, its URL, or its command line. */
function describeTarget(target: UpstreamTarget): string {
  if (target.kind === "builtin") return "in-process";
  if (target.kind === "http") return target.url;
  return [target.command, ...target.args].join(" ");
}

/**
 * One upstream's row of the admin view (list_servers, get_server_health), as
 * `viewer` may see it: command lines and URLs carry secrets (an `--api-key`
 * argument, a `?key=` query) and say where to probe, so an agent-bound viewer
 * gets neither, nor a stdio upstream's pid or failure text (which can name
 * its command); it sees the name, transport kind, health and tools.
 */
export function serverView(upstream: Upstream, viewer: Caller): AdminServer {
  const transport = upstream.target.kind === "builtin"
    ? "in-process"
    : upstream.target.kind;
  const operator = viewer.agent === undefined;
  const stdio = upstream.target.kind === "stdio";
  return {
    name: upstream.name,
    group: upstream.group,
    source: upstream.source,
    transport,
    target: operator || upstream.target.kind === "builtin"
      ? describeTarget(upstream.target)
      : null,
    credentials: upstream.target.kind === "http" &&
      Object.keys(upstream.target.headers).length > 0,
    state: upstream.state,
    since: new Date(upstream.since).toISOString(),
    last_check: upstream.lastCheck === undefined
      ? null
      : new Date(upstream.lastCheck).toISOString(),
    latency_ms: upstream.latencyMs ?? null,
    last_error: operator || !stdio ? upstream.lastError ?? null : null,
    calls: upstream.calls,
    errors: upstream.errors,
    error_rate: upstream.calls === 0
      ? 0
      : Math.round((upstream.errors / upstream.calls) * 1000) / 1000,
    in_flight: upstream.inFlight,
    tools: upstream.tools.length,
    pid: operator ? upstream.pid : null,
    restarts: upstream.restarts,
    reroutes: upstream.reroutes,
  };
}

export function healthOf(
  upstreams: Iterable<Upstream>,
  /** How many tools the aggregate lists. */
  size: number,
): { [key: string]: JsonValue } {
  const states: { [key: string]: JsonValue } = {};
  const unhealthy: string[] = [];
  let total = 0;
  for (const upstream of upstreams) {
    total++;
    states[upstream.name] = upstream.state;
    if (upstream.state !== "healthy") {
      unhealthy.push(`${upstream.name} ${upstream.state}`);
    }
  }
  // The dashboard's one line for this server: what a person scans for.
  const summary = `${total - unhealthy.length} of ${total} upstreams healthy` +
    (unhealthy.length > 0 ? ` · ${unhealthy.join(", ")}` : "") +
    ` · ${size} tools`;
  return {
    status: unhealthy.length > 0 ? "degraded" : "ok",
    summary,
    upstreams: states,
    tools: size,
  };
}

export function metricsOf(upstreams: Iterable<Upstream>): Metric[] {
  const all = [...upstreams];
  const labels = (upstream: Upstream) => ({
    upstream: upstream.name,
    group: upstream.group,
  });
  return [
    {
      name: "agentd_gateway_upstream_up",
      help: "1 when the upstream is healthy",
      type: "gauge",
      samples: all.map((upstream) => ({
        labels: labels(upstream),
        value: upstream.state === "healthy" ? 1 : 0,
      })),
    },
    {
      name: "agentd_gateway_upstream_calls_total",
      help: "Tool calls routed to each upstream",
      type: "counter",
      samples: all.map((upstream) => ({
        labels: labels(upstream),
        value: upstream.calls,
      })),
    },
    {
      name: "agentd_gateway_upstream_errors_total",
      help: "Routed calls that failed or returned an error",
      type: "counter",
      samples: all.map((upstream) => ({
        labels: labels(upstream),
        value: upstream.errors,
      })),
    },
    {
      name: "agentd_gateway_upstream_error_rate",
      help:
        "Share of the routed calls to each upstream that failed (0 before any call)",
      type: "gauge",
      samples: all.map((upstream) => ({
        labels: labels(upstream),
        value: upstream.calls === 0 ? 0 : upstream.errors / upstream.calls,
      })),
    },
    {
      name: "agentd_gateway_reroutes_total",
      help:
        "Calls meant for an upstream that a replica took (it was down or did not answer)",
      type: "counter",
      samples: all.map((upstream) => ({
        labels: labels(upstream),
        value: upstream.reroutes,
      })),
    },
    {
      name: "agentd_gateway_upstream_call_duration_ms",
      help: "Routed call duration in milliseconds (recent calls)",
      type: "summary",
      samples: all.flatMap((upstream) =>
        upstream.latency.samples(labels(upstream))
      ),
    },
    {
      name: "agentd_gateway_upstream_restarts_total",
      help: "Restarts of stdio upstreams",
      type: "counter",
      samples: all.map((upstream) => ({
        labels: labels(upstream),
        value: upstream.restarts,
      })),
    },
  ];
}
