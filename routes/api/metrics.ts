// GET /metrics: Prometheus text for every server plus the process.

import { Hono } from "hono";
import { errorResponse } from "../../platform/http_errors.ts";
import type { GuardVariables } from "../../platform/http_guards.ts";
import { type Metric, renderPrometheus } from "../../platform/metrics.ts";
import type { HostedServer } from "../../tools/kit/host.ts";

export function metricsRoutes(
  options: { hosts: readonly HostedServer[]; startedAt: number },
): Hono<{ Variables: GuardVariables }> {
  const app = new Hono<{ Variables: GuardVariables }>();
  app.get("/", (c) => {
    // Labels name memory namespaces (agent names) and upstreams: the operator's.
    const caller: GuardVariables["caller"] | undefined = c.get("caller");
    if (caller?.agent !== undefined) {
      return errorResponse(
        403,
        `The token of agent "${caller.agent}" cannot read /metrics; scrape it with the daemon token`,
      );
    }
    const memory = Deno.memoryUsage();
    const process: Metric[] = [
      {
        name: "agentd_uptime_seconds",
        help: "Seconds since the daemon started",
        type: "gauge",
        samples: [{
          value: Math.round((Date.now() - options.startedAt) / 1000),
        }],
      },
      {
        name: "process_resident_memory_bytes",
        help: "Resident memory of the agentd process",
        type: "gauge",
        samples: [{ value: memory.rss }],
      },
      {
        name: "agentd_heap_used_bytes",
        help: "JavaScript heap in use",
        type: "gauge",
        samples: [{ value: memory.heapUsed }],
      },
    ];
    const body = renderPrometheus([
      ...process,
      ...options.hosts.flatMap((host) => host.metrics()),
    ]);
    return c.body(body, 200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    });
  });
  return app;
}
