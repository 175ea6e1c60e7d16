// GET /health: the daemon's and each server's phase, for people and probes.

import { Hono } from "hono";
import type { HostedServer, ServerHealth } from "../tools/kit/host.ts";

export type DaemonStatus = "ok" | "degraded" | "error" | "shutting_down";

export interface HealthOptions {
  hosts: readonly HostedServer[];
  version: string;
  startedAt: number;
  clock?: () => number;
}

export interface HealthBody {
  status: DaemonStatus;
  version: string;
  uptime_s: number;
  servers: Record<string, ServerHealth>;
}

export async function healthOf(options: HealthOptions): Promise<HealthBody> {
  const clock = options.clock ?? Date.now;
  const servers: Record<string, ServerHealth> = {};
  for (const host of options.hosts) servers[host.id] = await host.health();
  const phases = options.hosts.map((host) => host.phase.phase);
  let status: DaemonStatus = "ok";
  if (phases.includes("shutdown")) status = "shutting_down";
  else if (phases.length > 0 && phases.every((phase) => phase === "error")) {
    status = "error";
  } else if (
    phases.some((phase) => phase !== "running") ||
    Object.values(servers).some((server) => server.degraded === true)
  ) status = "degraded";
  return {
    status,
    version: options.version,
    uptime_s: Math.round((clock() - options.startedAt) / 1000),
    servers,
  };
}

export function healthRoutes(options: HealthOptions): Hono {
  const app = new Hono();
  app.get("/", async (c) => {
    const body = await healthOf(options);
    const healthy = body.status === "ok" || body.status === "degraded";
    return c.json(body, healthy ? 200 : 503);
  });
  return app;
}
