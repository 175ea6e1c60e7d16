// The hosted side of the memory backend: a remote store (PostgreSQL,
// another agentd over MCP, KV Connect) behind a local cache and write queue.
// open.ts imports this module only for --storage hosted, so a local start
// never loads the MCP client, KV Connect or the queue.

import { join } from "node:path";
import { scoped, type Store } from "../../../platform/store/mod.ts";
import { openKvStore } from "../../../platform/store/kv.ts";
import { lazy } from "../../../platform/lazy.ts";
import type { ServerDeps } from "../../kit/mod.ts";
import type { MemoryConfig } from "../config.ts";
import { HostedBackend, type RemoteConnector } from "./hosted.ts";
import { KvBackend } from "./kv.ts";
import { connectKvBackend } from "./kv_connect.ts";
import { McpBackend } from "./mcp.ts";
import type { MemoryBackend } from "./port.ts";

/** The hosted backend still opening, its kind, and what else to close when the server stops. */
export async function openHosted(
  config: MemoryConfig,
  deps: ServerDeps,
  dataKey: CryptoKey,
): Promise<
  { kind: string; loading: Promise<MemoryBackend>; close(): Promise<void> }
> {
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
    kind: `hosted(${remote.kind})`,
    loading,
    close: async () => local === deps.store ? undefined : await local.close(),
  };
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
