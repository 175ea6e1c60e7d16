// Opens the backend the memory config asks for: a local KV file, or a hosted
// store (PostgreSQL, another agentd's memory over MCP, KV Connect) behind a
// local cache and write queue.

import { join } from "node:path";
import { scoped, type Store } from "../../../platform/store.ts";
import { openKvStore } from "../../../platform/store_kv.ts";
import type { ServerDeps } from "../../kit/mod.ts";
import type { MemoryConfig } from "../config.ts";
import { DeferredBackend } from "./deferred.ts";
import { HostedBackend, type RemoteConnector } from "./hosted.ts";
import { KvBackend } from "./kv.ts";
import { connectKvBackend } from "./kv_connect.ts";
import { McpBackend } from "./mcp.ts";
import type { MemoryBackend } from "./port.ts";
import { raiseAlert } from "../../../platform/alerts.ts";
import { messageOf } from "../../../platform/errors.ts";
import { lazy } from "../../../platform/lazy.ts";

/**
 * The backend the config asks for, and what else to close when the server
 * stops. Config and store files are checked now, so mistakes stop the start;
 * loading entries into the search indexes (seconds at 100k entries) goes on
 * behind a DeferredBackend while the server already answers.
 */
export async function openBackend(
  config: MemoryConfig,
  deps: ServerDeps,
  dataKey: CryptoKey,
): Promise<{ backend: DeferredBackend; close(): Promise<void> }> {
  if (config.alert_webhook !== undefined) {
    deps.log.addSecret(config.alert_webhook);
  }
  if (config.storage === "local") {
    if (config.url !== undefined) {
      throw new Error(
        "--url is for --storage hosted; with --storage local use --path DIR",
      );
    }
    const own = config.path
      ? await openKvStore(join(config.path, "memory.kv"))
      : undefined;
    const loading = KvBackend.open(own ?? scoped(deps.store, ["entries"]), {
      logger: deps.log,
    });
    return {
      backend: deferred("local", loading, config, deps),
      close: async () => await own?.close(),
    };
  }
  if (config.url === undefined) {
    throw new Error(
      `--storage hosted needs --url: ${HOSTED_URLS}`,
    );
  }
  if (config.key !== undefined) deps.log.addSecret(config.key);
  const remote = remoteConnector(config.url, config.key, deps, dataKey);
  // The local side of hosted mode: a cache and the durable write queue.
  const local: Store = config.path
    ? await openKvStore(join(config.path, "memory-cache.kv"))
    : deps.store;
  const loading = KvBackend.open(scoped(local, ["cache"]), { logger: deps.log })
    .then((cache) =>
      HostedBackend.open({
        remote,
        cache,
        store: scoped(local, ["queue"]),
        log: deps.log,
        probeIntervalMs: config.sync_interval_ms,
        alertWebhook: config.alert_webhook,
      })
    );
  return {
    backend: deferred(`hosted(${remote.kind})`, loading, config, deps),
    close: async () => local === deps.store ? undefined : await local.close(),
  };
}

/** A backend still opening; an operator alert if it cannot open at all. */
function deferred(
  kind: string,
  loading: Promise<MemoryBackend>,
  config: MemoryConfig,
  deps: ServerDeps,
): DeferredBackend {
  const backend = new DeferredBackend(kind, loading);
  backend.ready().catch((error: unknown) =>
    raiseAlert({ log: deps.log, webhook: config.alert_webhook }, {
      event: "memory_storage_unavailable",
      backend: kind,
      since: new Date().toISOString(),
      error: messageOf(error),
      queued_writes: 0,
    }, "problem")
  );
  return backend;
}

/** An agentd memory endpoint: `…/mcp/memory` (serve) or `…/mcp` (`agentd mcp memory --port`). */
const AGENTD_MEMORY_PATH = /\/mcp(\/memory)?\/?$/;

/**
 * The hosted store a URL names: postgres:// is PostgreSQL; an http(s) URL
 * ending in /mcp/memory (or /mcp) is another agentd's memory server, reached
 * over MCP with `key` as JWT; any other http(s) URL is KV Connect.
 */
function remoteConnector(
  url: string,
  key: string | undefined,
  deps: ServerDeps,
  dataKey: CryptoKey,
): RemoteConnector {
  const parsed = URL.parse(url);
  if (parsed === null) {
    throw new Error(
      `--url is not a URL; expected ${HOSTED_URLS}`,
    );
  }
  const protocol = parsed.protocol;
  if (protocol === "postgres:" || protocol === "postgresql:") {
    return {
      kind: "postgres",
      // The PostgreSQL driver loads only for a postgres:// store.
      connect: async () =>
        (await lazy<typeof import("./pg.ts")>("./pg.ts", import.meta.url))
          .PgBackend.connect({ url, key, log: deps.log }),
    };
  }
  if (
    (protocol === "https:" || protocol === "http:") &&
    AGENTD_MEMORY_PATH.test(parsed.pathname)
  ) {
    return {
      kind: "agentd",
      connect: () =>
        McpBackend.connect({ url, token: key, dataKey, log: deps.log }),
    };
  }
  if (protocol === "https:" || protocol === "http:") {
    return {
      kind: "kv-connect",
      connect: () => connectKvBackend({ url, token: key, log: deps.log }),
    };
  }
  throw new Error(
    `Unsupported hosted store URL ${protocol}//…: use ${HOSTED_URLS}`,
  );
}

const HOSTED_URLS =
  "postgres://user@host:port/db, https://host/mcp/memory (another agentd) or https://… (KV Connect)";
