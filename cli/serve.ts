// `agentd serve`: the HTTP daemon with every enabled server at /mcp/<id>.

import { createApp } from "../routes/mod.ts";
import { VERSION } from "../platform/version.ts";
import { McpHttpEndpoint } from "../tools/mcp_http.ts";
import {
  configKey,
  flagsHelp,
  parseFlags,
  serveFlags,
  UsageError,
} from "./args.ts";
import {
  assertSafeBinding,
  createDaemonLogger,
  loadSettings,
  openStore,
  selectServers,
  shutdown,
  shutdownSignal,
  startServers,
} from "./boot.ts";
import type { CliContext } from "./context.ts";
import { listen } from "./listen.ts";

export const SERVE_HELP = `Usage: agentd serve [flags]

Runs the daemon: every enabled MCP server at /mcp/<server>, and /health.

Flags:
${flagsHelp(serveFlags)}

Every flag can also be set in the config file or as AGENTD_<NAME>
(AGENTD_PORT, AGENTD_DATA_DIR, ...); flags win. Binding off loopback needs
a token (AGENTD_TOKEN or token_file).`;

export async function runServe(
  args: string[],
  ctx: CliContext,
): Promise<number> {
  const { values, positionals } = parseFlags("serve", args, serveFlags);
  if (values.help === true) {
    ctx.print(SERVE_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `unexpected argument "${positionals[0]}" for "agentd serve"`,
      "serve",
    );
  }
  const flags: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    if (name !== "help") flags[configKey(name)] = value;
  }
  const settings = await loadSettings({
    flags,
    specs: ctx.specs,
    env: ctx.env,
  });
  const specs = selectServers(settings, ctx.specs);
  const base = settings.base;
  assertSafeBinding(base);

  const log = createDaemonLogger(base);
  const startedAt = Date.now();
  const signal = shutdownSignal();
  const store = await openStore(settings.dataDir);
  const hosts = await startServers(specs, { store, log, settings });
  const endpoints = new Map(
    hosts.map((host) => [
      host.id,
      new McpHttpEndpoint(host, {
        log,
        idleTimeoutMs: base.session_idle_timeout_ms,
      }),
    ]),
  );
  const app = createApp({
    hosts,
    endpoints,
    layout: "daemon",
    bindHost: base.host,
    allowedHosts: base.allowed_hosts,
    allowedOrigins: base.allowed_origins,
    maxBodyBytes: base.max_body_bytes,
    token: base.token,
    version: VERSION,
    startedAt,
    log,
  });
  let listener: Deno.HttpServer;
  try {
    listener = listen(app.fetch, {
      host: base.host,
      port: base.port,
      log,
      servers: hosts.map((h) => h.id),
    });
  } catch (error) {
    await store.close();
    throw error;
  }

  const received = await signal.received;
  log.info("shutdown", {
    signal: received,
    in_flight: hosts.reduce((n, h) => n + h.inFlight.count, 0),
  });
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
