/**
 * The one way the daemon opens a Store from its settings: `store` (flag
 * `--store`, env AGENTD_STORE) is a `postgres://` URL for a store shared by
 * several daemons, a KV file path, or absent for `<data dir>/store.kv`.
 */
import { join } from "node:path";
import type { Store } from "./mod.ts";
import { checkPgUrl } from "./pg_url.ts";
import { openKvStore } from "./kv.ts";
import { lazy } from "../lazy.ts";

export interface StoreSettings {
  /** `postgres://…`, a KV file path, or undefined for the default file. */
  store?: string;
  dataDir: string;
  /** PostgreSQL only: pool size, connect and statement timeouts. */
  poolSize?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
}

export function isPostgresUrl(spec: string | undefined): spec is string {
  return spec !== undefined && /^postgres(ql)?:\/\//i.test(spec);
}

/** Where the store is, fit for logs (no password). */
export function describeStore(settings: StoreSettings): string {
  const spec = settings.store;
  if (isPostgresUrl(spec)) return checkPgUrl(spec);
  return spec ?? join(settings.dataDir, "store.kv");
}

export async function openStoreAt(settings: StoreSettings): Promise<Store> {
  const spec = settings.store;
  if (isPostgresUrl(spec)) {
    // Loaded only for a PostgreSQL store: the driver stays out of every other start.
    const { PgStore } = await lazy<typeof import("./pg.ts")>(
      "./pg.ts",
      import.meta.url,
    );
    return await PgStore.connect({
      url: spec,
      maxConnections: settings.poolSize,
      connectTimeoutMs: settings.connectTimeoutMs,
      statementTimeoutMs: settings.statementTimeoutMs,
      applicationName: "agentd",
    });
  }
  return await openKvStore(spec ?? join(settings.dataDir, "store.kv"));
}

/** Whether the store answers now; stores without a server always do. */
export async function storeReachable(
  store: Store,
): Promise<{ ok: true } | { ok: false; error: string }> {
  if (store.ping === undefined) return { ok: true };
  try {
    await store.ping();
    return { ok: true };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : "" };
  }
}
