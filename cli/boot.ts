// What every face needs before it serves: settings from file, env and
// flags; the store; the servers started. And the ordered shutdown.

import { join } from "node:path";
import type { z } from "zod";
import {
  type BaseConfig,
  buildConfigSchema,
  loadConfig,
  readBaseConfig,
} from "../platform/config.ts";
import { ConfigError } from "../platform/config_merge.ts";
import { isLoopback, isWildcard } from "../platform/hosts.ts";
import { credentialsProblem } from "../platform/identity.ts";
import { daemonOrigin } from "../platform/daemon_origin.ts";
import {
  onShutdownSignal,
  type ShutdownSignal,
} from "../platform/lifecycle.ts";
import { createLogger, type Logger } from "../platform/log.ts";
import { configDir, dataDir as defaultDataDir } from "../platform/paths.ts";
import { scoped, type Store } from "../platform/store/mod.ts";
import { openStoreAt } from "../platform/store/open.ts";
import { passwordIn } from "../platform/store/pg_url.ts";
import {
  type HostDeferral,
  HostedServer,
  type HostOptions,
} from "../tools/kit/host.ts";
import { Guard } from "../tools/kit/policy/guard.ts";
import { TaskBoard } from "../tools/kit/tasks.ts";
import { PolicyConfig } from "../platform/policy.ts";
import type { AnyServerSpec, Peer } from "../tools/kit/mod.ts";
import type { ServerSection } from "../tools/registry.ts";
import { peerOf } from "../tools/kit/transport/peer.ts";
import { configKey, UsageError } from "./args.ts";
import { AgentsConfig } from "../agents/config.ts";
import { ProvidersConfig } from "../agents/providers/config.ts";
import { messageOf } from "../platform/errors.ts";
import { isRecord } from "../platform/validation.ts";

/** Failures that stop agentd from starting (exit code 1), with a message a person can act on. */
export class StartupError extends Error {
  override name = "StartupError";
}

export interface Settings {
  base: BaseConfig;
  /** Every validated value, server sections included. */
  values: Record<string, unknown>;
  origin: Record<string, string>;
  dataDir: string;
  configFile?: string;
}

export async function loadSettings(options: {
  flags: Record<string, unknown>;
  /** Whose config sections the file may hold: specs, or the catalog's sections alone. */
  specs: readonly ServerSection[];
  env: Record<string, string>;
}): Promise<Settings> {
  // The agent runtime's sections are known to every face, so one config file serves all.
  const sections: Record<string, z.ZodObject | z.ZodRecord> = {
    agents: AgentsConfig,
    providers: ProvidersConfig,
    policy: PolicyConfig,
  };
  for (const spec of options.specs) {
    if (spec.config) sections[spec.id] = spec.config;
  }
  const schema = buildConfigSchema(sections);
  const { config: explicitFile, ...flags } = options.flags;
  const file = typeof explicitFile === "string"
    ? explicitFile
    : options.env.AGENTD_CONFIG || undefined;
  let defaultFile: string | undefined;
  try {
    defaultFile = join(configDir(), "agentd.json");
  } catch {
    defaultFile = undefined; // no home directory: only explicit files and env apply
  }
  const loaded = await loadConfig(schema, {
    file,
    defaultFile,
    env: options.env,
    flags,
  });
  const base = readBaseConfig(loaded.values);
  let dir = base.data_dir;
  if (dir === undefined) {
    try {
      dir = defaultDataDir();
    } catch (error) {
      throw new ConfigError(`${messageOf(error)}; or pass --data-dir DIR`);
    }
  }
  return {
    base,
    values: loaded.values,
    origin: loaded.origin,
    dataDir: dir,
    configFile: loaded.file,
  };
}

/**
 * Settings for `agentd serve` from its flags as parsed (`data-dir`, …;
 * `--help` aside) over the config file and `env`.
 */
export function serveSettings(
  values: Record<string, unknown>,
  specs: readonly ServerSection[],
  env: Record<string, string>,
): Promise<Settings> {
  const flags: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    if (name !== "help") flags[configKey(name)] = value;
  }
  return loadSettings({ flags, specs, env });
}

/** The specs named by `servers` (all when absent); an unknown id is an error naming the known ones. */
export function selectServers<S extends ServerSection>(
  settings: Settings,
  specs: readonly S[],
): S[] {
  const wanted = settings.base.servers;
  if (wanted === undefined) return [...specs];
  const known = specs.map((spec) => spec.id);
  const unknown = wanted.filter((id) => !known.includes(id));
  if (unknown.length > 0) {
    const message = `unknown server${unknown.length > 1 ? "s" : ""} ${
      unknown.map((id) => `"${id}"`).join(", ")
    } in servers; built: ${known.length ? known.join(", ") : "none yet"}`;
    if (settings.origin.servers === "flag") {
      throw new UsageError(message, "serve");
    }
    throw new ConfigError(message);
  }
  return specs.filter((spec) => wanted.includes(spec.id));
}

/**
 * Off loopback, a token is mandatory: refuse to start rather than expose
 * tools to the network. With agent tokens or JWTs it is mandatory anywhere:
 * otherwise a caller without credentials would be the operator.
 */
export function assertSafeBinding(base: BaseConfig): void {
  const problem = credentialsProblem({
    token: base.token,
    agentTokens: base.agent_tokens,
    jwt: base.jwt,
  });
  if (problem !== undefined) {
    throw new StartupError(`refusing to start: ${problem}`);
  }
  if (!isLoopback(base.host) && base.token === undefined) {
    throw new StartupError(
      `refusing to listen on ${base.host} without a token: anyone who can reach the port ` +
        `could drive your browser and desktop. Set AGENTD_TOKEN (16+ characters) or ` +
        `token_file, or bind 127.0.0.1.`,
    );
  }
}

export function createDaemonLogger(base: BaseConfig): Logger {
  const log = createLogger({ level: base.log_level });
  redactSecretsOf(base, log);
  return log;
}

/** Teaches `log` the secrets of `base` (tokens, the store's password) to redact. */
export function redactSecretsOf(base: BaseConfig, log: Logger): void {
  if (base.token !== undefined) log.addSecret(base.token);
  for (const token of Object.values(base.agent_tokens)) log.addSecret(token);
  if (base.jwt?.secret !== undefined) log.addSecret(base.jwt.secret);
  const storePassword = base.store === undefined ? "" : passwordIn(base.store);
  if (storePassword) log.addSecret(storePassword);
}

export async function openStore(settings: Settings): Promise<Store> {
  const base = settings.base;
  try {
    return await openStoreAt({
      store: base.store,
      dataDir: settings.dataDir,
      poolSize: base.store_pool_size,
      connectTimeoutMs: base.store_connect_timeout_ms,
      statementTimeoutMs: base.store_statement_timeout_ms,
    });
  } catch (error) {
    throw new StartupError(messageOf(error));
  }
}

/**
 * Starts the servers in parallel; servers that aggregate (the gateway) start
 * after the others, which they receive as in-process peers.
 */
export async function startServers(
  specs: readonly AnyServerSpec[],
  options: {
    /**
     * Servers loaded on first use (`serve`): each becomes a host that is
     * `not_loaded` until a session, a link or the gateway's first call to it.
     */
    deferred?: readonly HostDeferral[];
    /** Server ids in the order /health and the dashboard list them (`serve`'s). */
    order?: readonly string[];
    store: Store;
    log: Logger;
    settings: Settings;
    env: Readonly<Record<string, string>>;
    /** The HTTP face's address once it listens. */
    address?: () => string | undefined;
    /** `agentd mcp <id>`: one server as the whole process. */
    alone?: boolean;
  },
): Promise<HostedServer[]> {
  // One guard for the process: every server's calls meet the same policy and audit trail.
  const guard = createGuard(options);
  // One task board: /admin lists every server's tasks.
  const tasks = createTaskBoard(options);
  const start = (spec: AnyServerSpec, peers: readonly Peer[]) =>
    HostedServer.start(
      spec,
      hostOptions(spec, { ...options, guard, tasks, peers }),
    );
  // Each deferred server's preflight decides: start now, wait in `error`, or wait.
  const judged = await Promise.all(
    (options.deferred ?? []).map(async (deferral) => {
      const own = hostOptions(deferral.facts, { ...options, guard, tasks });
      const found = await deferral.preflight?.(own).catch((error) => ({
        start: `its preflight failed (${messageOf(error)})`,
      }));
      if (found !== undefined && "start" in found) {
        options.log.info("server_starts_now", {
          server: deferral.facts.id,
          reason: found.start,
        });
        return { now: await deferral.load() };
      }
      return {
        later: HostedServer.deferred(deferral, {
          log: options.log,
          guard,
          tasks,
          setup: () => Promise.resolve(own),
          error: found?.error,
        }),
      };
    }),
  );
  const now = [
    ...specs,
    ...judged.flatMap((each) => each.now === undefined ? [] : [each.now]),
  ];
  const deferred = judged.flatMap((each) =>
    each.later === undefined ? [] : [each.later]
  );
  const first = await Promise.all(
    now.filter((spec) => !spec.aggregates).map((spec) => start(spec, [])),
  );
  const peers = [...first, ...deferred].map(peerOf);
  const later = await Promise.all(
    now.filter((spec) => spec.aggregates).map((spec) => start(spec, peers)),
  );
  const hosts = [...first, ...later];
  const all = [
    ...now.map((spec) => {
      const host = hosts.find((candidate) => candidate.spec === spec);
      if (!host) throw new Error(`${spec.id} was not started`);
      return host;
    }),
    ...deferred,
  ];
  const order = options.order;
  return order === undefined
    ? all
    : all.sort((a, b) => order.indexOf(a.id) - order.indexOf(b.id));
}

/** The process's policy and audit trail, kept in `store`. */
export function createGuard(options: {
  store: Store;
  log: Logger;
  settings: Settings;
}): Guard {
  return new Guard(
    scoped(options.store, ["agentd", "policy"]),
    options.log.child({ component: "policy" }),
    PolicyConfig.parse(options.settings.values.policy ?? {}),
    Date.now,
  );
}

/** The process's MCP tasks, kept in `store` (tools/kit/tasks.ts). */
export function createTaskBoard(options: {
  store: Store;
  log: Logger;
}): TaskBoard {
  return new TaskBoard({
    store: scoped(options.store, ["agentd", "tasks"]),
    log: options.log,
  });
}

/** What `spec` gets to start with from these settings: its config section, its slice of the store. */
export function hostOptions(spec: { id: string; namespace: string }, options: {
  store: Store;
  log: Logger;
  settings: Settings;
  env: Readonly<Record<string, string>>;
  guard: Guard;
  tasks?: TaskBoard;
  peers?: readonly Peer[];
  address?: () => string | undefined;
  alone?: boolean;
}): HostOptions {
  const base = options.settings.base;
  const interfaces = isWildcard(base.host) ? interfaceAddresses() : [];
  const section = options.settings.values[spec.id];
  return {
    store: scoped(options.store, [spec.namespace]),
    log: options.log,
    config: isRecord(section) ? section : {},
    dataDir: options.settings.dataDir,
    env: options.env,
    peers: options.peers,
    address: options.address,
    ownOrigin: () =>
      daemonOrigin({
        address: options.address?.(),
        bindHost: base.host,
        port: base.port,
        allowedHosts: base.allowed_hosts,
        interfaceAddresses: interfaces,
      }),
    alone: options.alone,
    guard: options.guard,
    tasks: options.tasks,
  };
}

/** What an HTTP daemon (`serve`, `mcp <id> --port`) runs on, its servers started. */
export interface HttpDaemon {
  base: BaseConfig;
  log: Logger;
  signal: ReturnType<typeof shutdownSignal>;
  store: Store;
  hosts: HostedServer[];
  /** For serveHttp: tells the servers the address once it listens. */
  onListening(address: string): void;
}

/**
 * Refuses an unsafe binding, then makes the logger, the shutdown signal and
 * the store, and starts `specs` on them.
 */
export async function startHttpDaemon(
  settings: Settings,
  specs: readonly AnyServerSpec[],
  options: {
    env: Readonly<Record<string, string>>;
    alone?: boolean;
    /** Servers loaded on first use, and the order of all (startServers). */
    deferred?: readonly HostDeferral[];
    order?: readonly string[];
  },
): Promise<HttpDaemon> {
  const base = settings.base;
  assertSafeBinding(base);
  const log = createDaemonLogger(base);
  const signal = shutdownSignal(log);
  const store = await openStore(settings);
  let address: string | undefined;
  const hosts = await startServers(specs, {
    store,
    log,
    settings,
    env: options.env,
    address: () => address,
    alone: options.alone,
    deferred: options.deferred,
    order: options.order,
  });
  return {
    base,
    log,
    signal,
    store,
    hosts,
    onListening: (url) => address = url,
  };
}

/** Resolves with the first SIGINT/SIGTERM; logs repeats (ignored, or forcing exit). */
export function shutdownSignal(log: Logger): {
  received: Promise<ShutdownSignal>;
  dispose(): void;
} {
  const { promise, resolve } = Promise.withResolvers<ShutdownSignal>();
  const dispose = onShutdownSignal(
    resolve,
    (signal, action) =>
      action === "exit"
        ? log.warn("signal_repeat", { signal, action: "exit", code: 130 })
        : log.info("signal_repeat", { signal, action: "ignored" }),
  );
  return { received: promise, dispose };
}

/** A way in for clients (HTTP endpoint, stdio) as shutdown sees it. */
export interface Channel {
  stopAccepting(): void;
  /** Resolves once responses already produced have been written out. */
  drain(timeoutMs: number): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * The Shutdown phase, in order: stop new sessions, let running calls finish
 * (bounded), let their responses out, end sessions and streams, stop the
 * listener, flush the store.
 */
export async function shutdown(options: {
  hosts: readonly HostedServer[];
  channels: Iterable<Channel>;
  listener?: Deno.HttpServer;
  /** Absent when it never opened (a stdio server that could not start). */
  store?: Store;
  log: Logger;
  timeoutMs: number;
}): Promise<void> {
  const channels = [...options.channels];
  for (const channel of channels) channel.stopAccepting();
  await Promise.all(options.hosts.map((host) => host.stop(options.timeoutMs)));
  await Promise.all(
    channels.map((channel) => channel.drain(options.timeoutMs)),
  );
  await Promise.all(channels.map((channel) => channel.close()));
  if (options.listener) await options.listener.shutdown();
  await options.store?.close();
  options.log.info("stopped");
}

/** The machine's own addresses: a daemon bound to a wildcard answers on each. */
function interfaceAddresses(): string[] {
  try {
    return Deno.networkInterfaces().map((entry) => entry.address);
  } catch {
    return []; // no --allow-sys: the names configured still count
  }
}
