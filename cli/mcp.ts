// `agentd mcp <server>`: one server alone, on stdio (desktop clients) or on
// streamable HTTP at /mcp with --port.

import { z } from "zod";
import type { AnyServerSpec } from "../tools/kit/mod.ts";
import { serveStdio } from "../tools/kit/transport/sdk_server.ts";
import {
  configKey,
  FIRST_STEPS,
  flagName,
  type FlagSet,
  flagsHelp,
  mcpFlags,
  noArguments,
  parseFlags,
  UsageError,
} from "./args.ts";
import {
  createDaemonLogger,
  createGuard,
  createTaskBoard,
  hostOptions,
  loadSettings,
  openStore,
  redactSecretsOf,
  type Settings,
  shutdown,
  shutdownSignal,
  startHttpDaemon,
  StartupError,
} from "./boot.ts";
import { HostedServer } from "../tools/kit/host.ts";
import type { Guard } from "../tools/kit/policy/guard.ts";
import type { TaskBoard } from "../tools/kit/tasks.ts";
import type { Store } from "../platform/store/mod.ts";
import { createLogger } from "../platform/log.ts";
import type { CliContext } from "./context.ts";
import { lazy } from "../platform/lazy.ts";
import { ConfigError, unwrap } from "../platform/config_merge.ts";

/** A server's own flags: one per key of its config section. */
export function serverFlags(spec: AnyServerSpec): FlagSet {
  const flags: FlagSet = {};
  for (const [key, schema] of Object.entries(spec.config?.shape ?? {})) {
    // Lists and maps (the gateway's upstreams) live in the config file only.
    if (!isScalar(schema)) continue;
    const boolean = isBoolean(schema);
    flags[flagName(key)] = {
      type: boolean ? "boolean" : "string",
      help: schema.description ?? "",
      ...(boolean ? {} : { value: key.split("_").at(-1)?.toUpperCase() }),
    };
  }
  return flags;
}

function isScalar(schema: z.core.$ZodType): boolean {
  const inner = unwrap(schema);
  return !(inner instanceof z.ZodObject || inner instanceof z.ZodArray ||
    inner instanceof z.ZodRecord);
}

function isBoolean(schema: z.core.$ZodType): boolean {
  return unwrap(schema) instanceof z.ZodBoolean;
}

export function mcpHelp(
  specs: readonly AnyServerSpec[],
  spec?: AnyServerSpec,
): string {
  const servers = specs.length
    ? specs.map((s) => `  ${s.id.padEnd(20)} ${s.title}`).join("\n")
    : "  (none built yet)";
  const own = spec && spec.config
    ? `\n\n${spec.id} flags:\n${flagsHelp(serverFlags(spec))}`
    : "";
  return `Usage: agentd mcp <server> [flags]

Runs one MCP server alone: on stdio (for Claude Desktop, VS Code, Cursor),
or on streamable HTTP at /mcp with /health when --port is given.

Servers:
${servers}

Flags:
${flagsHelp(mcpFlags)}${own}

${FIRST_STEPS}`;
}

export async function runMcp(args: string[], ctx: CliContext): Promise<number> {
  const id = args[0];
  if (id === undefined || id === "--help" || id === "-h") {
    if (id === undefined) {
      throw new UsageError("which server? agentd mcp <server>", "mcp");
    }
    ctx.print(mcpHelp(await ctx.servers.load()));
    return 0;
  }
  // Only this server's module loads: the others (puppeteer, FFI, OAuth) stay unread.
  const [spec] = ctx.servers.ids.includes(id)
    ? await ctx.servers.load([id])
    : [];
  if (!spec) {
    const built = ctx.servers.ids;
    throw new UsageError(
      `unknown server "${id}"; built: ${
        built.length ? built.join(", ") : "none yet"
      }`,
      "mcp",
    );
  }
  const own = serverFlags(spec);
  const { values, positionals } = parseFlags(`mcp ${id}`, args.slice(1), {
    ...mcpFlags,
    ...own,
  });
  if (values.help === true) {
    ctx.print(mcpHelp(await ctx.servers.load(), spec));
    return 0;
  }
  noArguments(positionals, `mcp ${id}`, "mcp");
  const flags: Record<string, unknown> = {};
  const section: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    if (name === "help") continue;
    if (name in own) section[configKey(name)] = value;
    else flags[configKey(name)] = value;
  }
  if (Object.keys(section).length > 0) flags[spec.id] = section;
  if (values.port === undefined) return await serveAlone(spec, flags, ctx);

  const settings = await loadSettings({ flags, specs: [spec], env: ctx.env });
  const daemon = await startHttpDaemon(settings, [spec], {
    env: ctx.env,
    alone: true,
  });
  const [host] = daemon.hosts;
  // Over HTTP a failed start ends the process: a service manager sees the
  // exit, and the endpoint would only refuse sessions (503).
  if (host.phase.phase !== "running") {
    await host.stop(0);
    await daemon.store.close();
    daemon.signal.dispose();
    throw new StartupError(
      host.phase.state.error ?? `${spec.id} did not start`,
    );
  }

  // Hono and the routes load only for --port: stdio never needs them.
  const { serveHttp } = await lazy<typeof import("./http_face.ts")>(
    "./http_face.ts",
    import.meta.url,
  );
  return await serveHttp({ ...daemon, layout: "single" });
}

/**
 * How long a stdio server in error waits after a failed start before a tool
 * call may try again: a retry can be slow (a browser launch, a store's
 * connect timeout), and a model calling in a loop should not run one each time.
 */
export const RETRY_START_AFTER_MS = 2_000;

/**
 * The server on stdio. A desktop client shows only "server disconnected"
 * when the process exits, so a start that fails (settings, store, or the
 * server's own start) leaves it serving in error: initialize and tools/list
 * answer, and each tools/call answers isError with the reason and the fix,
 * retrying the start first. Only a bad command line exits.
 */
async function serveAlone(
  spec: AnyServerSpec,
  flags: Record<string, unknown>,
  ctx: CliContext,
): Promise<number> {
  let settings: Settings | undefined;
  try {
    settings = await loadSettings({ flags, specs: [spec], env: ctx.env });
  } catch (error) {
    if (fromCommandLine(error)) throw error;
    // A bad file or env value: the Start phase below reports it, and retries.
  }
  const log = settings ? createDaemonLogger(settings.base) : createLogger();
  const signal = shutdownSignal(log);
  let store: Store | undefined;
  let guard: Guard | undefined;
  let tasks: TaskBoard | undefined;
  const host = await HostedServer.open(spec, {
    log,
    retryAfterMs: RETRY_START_AFTER_MS,
    // Kept once they succeed: a retry redoes only what failed.
    async setup() {
      if (settings === undefined) {
        settings = await loadSettings({ flags, specs: [spec], env: ctx.env });
        // The logger was made without them: the settings failed at first.
        redactSecretsOf(settings.base, log);
      }
      store ??= await openStore(settings);
      guard ??= createGuard({ store, log, settings });
      tasks ??= createTaskBoard({ store, log });
      return hostOptions(spec, {
        store,
        log,
        settings,
        env: ctx.env,
        guard,
        tasks,
        alone: true,
      });
    },
  });
  if (host.phase.phase === "error") {
    log.error("start_failed", {
      server: spec.id,
      error: host.phase.state.error,
      serving: "tools/call answers this error and retries the start",
    });
  }
  // The front (cli/stdio_front.ts) answered initialize and tools/list meanwhile.
  const front = ctx.stdioFront?.handover();
  await front?.written;
  const stdio = await serveStdio(host, front);
  if (front) log.info("stdio_front", { answered: front.answers });
  log.info("ready", { transport: "stdio", phase: host.phase.phase });
  const why = await Promise.race([
    signal.received,
    stdio.closed.then(() => "stdin closed" as const),
  ]);
  log.info("shutdown", { reason: why, in_flight: host.inFlight.count });
  await shutdown({
    hosts: [host],
    channels: [stdio],
    store,
    log,
    timeoutMs: settings?.base.shutdown_timeout_ms ?? DEFAULT_SHUTDOWN_MS,
  });
  signal.dispose();
  return 0;
}

/** The config's default drain time, for when the settings never loaded. */
const DEFAULT_SHUTDOWN_MS = 30_000;

/** A problem the person typed (a flag value): the process exits with usage, as for any bad flag. */
function fromCommandLine(error: unknown): boolean {
  return error instanceof ConfigError &&
    error.problems.some((problem) => problem.startsWith("flag "));
}
