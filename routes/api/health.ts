// GET /health: the daemon's and each server's phase, for people and probes.

import { Hono } from "hono";
import type { GuardVariables } from "../../platform/http_guards.ts";
import {
  type HostedServer,
  NOT_LOADED,
  type ServerHealth,
} from "../../tools/kit/host.ts";
import type { Store } from "../../platform/store/mod.ts";
import { storeReachable } from "../../platform/store/open.ts";

export type DaemonStatus = "ok" | "degraded" | "error" | "shutting_down";

export interface HealthOptions {
  hosts: readonly HostedServer[];
  version: string;
  startedAt: number;
  clock?: () => number;
  /** The daemon's store; a shared one that does not answer makes the daemon degraded. */
  store?: Store;
}

export interface StoreHealth {
  kind: string;
  status: "ok" | "unavailable";
  error?: string;
}

export interface HealthBody {
  status: DaemonStatus;
  version: string;
  uptime_s: number;
  servers: Record<string, ServerHealth>;
  store?: StoreHealth;
}

/**
 * The daemon's health; `details` of each server (memory's namespaces, which
 * are agent names, among them) only for the operator (`operator: true`):
 * status and phases are what monitors and other callers need.
 */
export async function healthOf(
  options: HealthOptions & { operator?: boolean },
): Promise<HealthBody> {
  const clock = options.clock ?? Date.now;
  const servers: Record<string, ServerHealth> = {};
  for (const host of options.hosts) {
    const health = await host.health();
    if (options.operator === false) delete health.details;
    servers[host.id] = health;
  }
  let store: StoreHealth | undefined;
  if (options.store) {
    const reach = await storeReachable(options.store);
    store = reach.ok
      ? { kind: options.store.kind, status: "ok" }
      : { kind: options.store.kind, status: "unavailable", error: reach.error };
  }
  // A server not loaded yet (`serve` loads it on first use) counts as running.
  const phases = Object.values(servers).map((server) =>
    server.phase === NOT_LOADED ? "running" : server.phase
  );
  let status: DaemonStatus = "ok";
  if (phases.includes("shutdown")) status = "shutting_down";
  else if (phases.length > 0 && phases.every((phase) => phase === "error")) {
    status = "error";
  } else if (
    phases.some((phase) => phase !== "running") ||
    Object.values(servers).some((server) => server.degraded === true) ||
    store?.status === "unavailable"
  ) status = "degraded";
  return {
    status,
    version: options.version,
    uptime_s: Math.round((clock() - options.startedAt) / 1000),
    servers,
    ...(store ? { store } : {}),
  };
}

export function healthRoutes(
  options: HealthOptions,
): Hono<{ Variables: GuardVariables }> {
  const app = new Hono<{ Variables: GuardVariables }>();
  app.get("/", async (c) => {
    // Unset when the app runs without the guards (route tests): as the operator.
    const caller: GuardVariables["caller"] | undefined = c.get("caller");
    const body = await healthOf({
      ...options,
      operator: caller?.agent === undefined,
    });
    const healthy = body.status === "ok" || body.status === "degraded";
    return c.json(body, healthy ? 200 : 503);
  });
  return app;
}
