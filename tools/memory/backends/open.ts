// Opens the backend the memory config asks for: a local KV file, or a hosted
// store (PostgreSQL, another agentd's memory over MCP, KV Connect) behind a
// local cache and write queue.

import { join } from "node:path";
import { scoped } from "../../../platform/store/mod.ts";
import { openKvStore } from "../../../platform/store/kv.ts";
import type { ServerDeps } from "../../kit/mod.ts";
import type { MemoryConfig } from "../config.ts";
import { DeferredBackend } from "./deferred.ts";
import { KvBackend } from "./kv.ts";
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
      images: join(config.path ?? deps.dataDir, "memory-index"),
    });
    return {
      backend: deferred("local", loading, config, deps),
      close: async () => await own?.close(),
    };
  }
  // Hosted mode's code (the MCP client, KV Connect, the write queue) loads only here.
  const { openHosted } = await lazy<typeof import("./open_hosted.ts")>(
    "./open_hosted.ts",
    import.meta.url,
  );
  const hosted = await openHosted(config, deps, dataKey);
  return {
    backend: deferred(hosted.kind, hosted.loading, config, deps),
    close: hosted.close,
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
