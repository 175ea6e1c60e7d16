// The HTTP face shared by `serve` (every server at /mcp/<id>) and
// `mcp <server> --port` (one server at /mcp): listen, wait for a signal,
// shut down in order.

import type { BaseConfig } from "../platform/config.ts";
import type { ShutdownSignal } from "../platform/lifecycle.ts";
import type { Logger } from "../platform/log.ts";
import type { Store } from "../platform/store/mod.ts";
import { VERSION } from "../platform/version.ts";
import { createApp } from "../routes/mod.ts";
import type { AgentService } from "../agents/service.ts";
import type { A2AService } from "../agents/a2a/mod.ts";
import type { HostedServer } from "../tools/kit/host.ts";
import { McpHttpEndpoint } from "../tools/kit/transport/http_server.ts";
import { shutdown, StartupError } from "./boot.ts";
import { lazy } from "../platform/lazy.ts";

export async function serveHttp(options: {
  hosts: HostedServer[];
  /** The /v1 agent runtime and its A2A layer (serve only). */
  agents?: AgentService;
  a2a?: A2AService;
  layout: "daemon" | "single";
  base: BaseConfig;
  store: Store;
  log: Logger;
  signal: { received: Promise<ShutdownSignal>; dispose(): void };
  /** Told the address (`http://127.0.0.1:8765`) once the listener is up. */
  onListening?: (address: string) => void;
}): Promise<number> {
  const { hosts, base, store, log, signal } = options;
  const endpoints = new Map(
    hosts.map((host) => [
      host.id,
      new McpHttpEndpoint(host, {
        log,
        idleTimeoutMs: base.session_idle_timeout_ms,
        maxSessions: base.session_max,
        maxSessionsPerAgent: base.session_max_per_agent,
      }),
    ]),
  );
  // jose loads only when JWTs are configured.
  const jwt = base.jwt &&
    (await lazy<typeof import("../platform/jwt.ts")>(
      "../platform/jwt.ts",
      import.meta.url,
    )).jwtVerifier(base.jwt);
  const app = createApp({
    hosts,
    endpoints,
    layout: options.layout,
    bindHost: base.host,
    allowedHosts: base.allowed_hosts,
    allowedOrigins: base.allowed_origins,
    maxBodyBytes: base.max_body_bytes,
    token: base.token,
    agentTokens: base.agent_tokens,
    jwt,
    agents: options.agents,
    a2a: options.a2a,
    version: VERSION,
    startedAt: Date.now(),
    store,
    log,
  });
  let listener: Deno.HttpServer;
  try {
    listener = listen(app.fetch, {
      host: base.host,
      port: base.port,
      log,
      servers: hosts.map((h) => h.id),
      onListening: options.onListening,
    });
  } catch (error) {
    await options.a2a?.close();
    await options.agents?.close(0);
    await Promise.all(hosts.map((host) => host.stop(0)));
    await store.close();
    signal.dispose();
    throw error;
  }
  const received = await signal.received;
  log.info("shutdown", {
    signal: received,
    in_flight: hosts.reduce((sum, host) => sum + host.inFlight.count, 0),
  });
  // Agent turns use the servers and the store: they end first (A2A tasks
  // are canceled; sends and team runs get the drain time, then stop).
  await options.a2a?.close();
  await options.agents?.close(base.shutdown_timeout_ms);
  await shutdown({
    hosts,
    channels: endpoints.values(),
    listener,
    store,
    log,
    timeoutMs: base.shutdown_timeout_ms,
  });
  signal.dispose();
  return 0;
}

/** Deno.serve with a readable error for a busy port and a `listening` log line tests can wait for. */
function listen(
  handler: (request: Request) => Response | Promise<Response>,
  options: {
    host: string;
    port: number;
    log: Logger;
    servers: string[];
    onListening?: (address: string) => void;
  },
): Deno.HttpServer {
  try {
    return Deno.serve({
      hostname: options.host,
      port: options.port,
      onListen: ({ hostname, port }) => {
        const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
        // A wildcard bind is reached by the machine's name, not 0.0.0.0.
        const reachable = hostname === "0.0.0.0" || hostname === "::"
          ? Deno.hostname()
          : shown;
        options.onListening?.(`http://${reachable}:${port}`);
        options.log.info("listening", {
          url: `http://${shown}:${port}`,
          host: hostname,
          port,
          servers: options.servers,
        });
      },
    }, handler);
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      throw new StartupError(
        `port ${options.port} on ${options.host} is already in use (another agentd?). ` +
          `Stop it, or pass --port N.`,
      );
    }
    if (error instanceof Deno.errors.AddrNotAvailable) {
      throw new StartupError(
        `cannot bind ${options.host}: no such address on this machine`,
      );
    }
    throw error;
  }
}
