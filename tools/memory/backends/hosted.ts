// HostedBackend: a hosted backend (PostgreSQL, another agentd, remote KV) with a local cache
// backend and a durable write queue, so that memory keeps working, and loses
// nothing, while the hosted store is unreachable.
//
// Healthy: writes go to the remote, then to the cache; reads come from the
// remote and refresh the cache. Degraded (the remote failed with
// BackendUnavailable): writes go to the cache and onto the queue (a local
// Store, in order, surviving restarts); reads come from the cache. A probe
// loop with backoff replays the queue once the remote answers (see
// hosted_queue.ts); an op the remote refuses for another reason goes
// to a dead-letter list instead of blocking the queue forever.

import type { Logger } from "../../../platform/log.ts";
import type { Store } from "../../../platform/store/mod.ts";
import {
  BackendUnavailable,
  isUnavailable,
  type ListQuery,
  type MemoryBackend,
} from "./port.ts";
import {
  describeOp,
  embeddingJson,
  putOp,
  type QueuedOp,
  replay,
  WriteQueue,
} from "./hosted_queue.ts";
import { ForwardingBackend, type StorageCall } from "./forwarding.ts";
import { Outage } from "./hosted_outage.ts";
import type {
  BackendHealth,
  EntryPage,
  Message,
  StorageStatus,
  StoredEntry,
} from "../model.ts";
import { messageOf } from "../../../platform/errors.ts";

/** A remote connected on demand, so the daemon can start during an outage. */
export interface RemoteConnector {
  kind: string;
  connect(): Promise<MemoryBackend>;
}

export interface HostedOptions {
  remote: MemoryBackend | RemoteConnector;
  /** Owned from now on: close() closes it. */
  cache: MemoryBackend;
  /** Holds the write queue (e.g. a KvStore file in the data dir); the caller keeps owning it. */
  store: Store;
  log: Logger;
  /** First probe delay while degraded (default 5000); doubles per failed probe. */
  probeIntervalMs?: number;
  /** Backoff ceiling (default 60000). */
  maxProbeIntervalMs?: number;
  /** Outage and recovery alerts are POSTed here too (platform/alerts.ts). */
  alertWebhook?: string;
  fetchFn?: typeof fetch;
}

type Call<R> = StorageCall<R>;

export class HostedBackend extends ForwardingBackend {
  readonly kind: string;
  #remote: MemoryBackend | null = null;
  #connector: RemoteConnector | null = null;
  #connecting: Promise<MemoryBackend> | null = null;
  readonly #cache: MemoryBackend;
  readonly #queue: WriteQueue;
  readonly #log: Logger;
  /** "PostgreSQL", for messages. */
  readonly #name: string;
  readonly #interval: number;
  readonly #maxInterval: number;
  readonly #outage: Outage;
  /** Degraded writes in progress, and how many ever started: the drain's final check. */
  #writing = 0;
  #started = 0;
  #delay: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #probing: Promise<void> | null = null;
  #closed = false;

  private constructor(options: HostedOptions, queue: WriteQueue) {
    super();
    const inner = options.remote.kind;
    this.kind = `hosted(${inner})`;
    this.#name = inner === "postgres"
      ? "PostgreSQL"
      : inner === "agentd"
      ? "Central memory (agentd)"
      : `Hosted store (${inner})`;
    if (isConnector(options.remote)) this.#connector = options.remote;
    else this.#remote = options.remote;
    this.#cache = options.cache;
    this.#queue = queue;
    this.#log = options.log;
    this.#outage = new Outage(this.kind, {
      log: options.log,
      webhook: options.alertWebhook,
      fetchFn: options.fetchFn,
    });
    this.#interval = options.probeIntervalMs ?? 5000;
    this.#maxInterval = options.maxProbeIntervalMs ?? 60_000;
    this.#delay = this.#interval;
  }

  /** Loads the queue left by a previous run and connects (or starts degraded). */
  static async open(options: HostedOptions): Promise<HostedBackend> {
    const backend = new HostedBackend(
      options,
      await WriteQueue.open(options.store),
    );
    const since = await backend.#queue.outageSince();
    if (since || backend.#queue.queued > 0) {
      // A previous run ended degraded: replay before trusting the remote.
      backend.#outage.resume(since ?? new Date().toISOString());
      backend.#log.warn("memory_hosted_pending", {
        backend: backend.kind,
        since: backend.#outage.since,
        queued_writes: backend.#queue.queued,
      });
      backend.#schedule(0);
    }
    try {
      await backend.#ensureRemote();
    } catch (error) {
      if (!isUnavailable(error)) {
        await backend.close();
        throw error;
      }
      backend.#enterOutage(error);
    }
    return backend;
  }

  override get(namespace: string, key: string): Promise<StoredEntry | null> {
    return this.#read((b) => b.get(namespace, key), async (entry) => {
      if (entry) await this.#fill(entry);
      else if (!this.#outage.active) await this.#cache.delete(namespace, key);
    });
  }

  override put(
    entry: StoredEntry,
    mode: "upsert" | "update",
  ): Promise<StoredEntry | null> {
    return this.#write(
      putOp(entry, mode),
      (remote) => remote.put(entry, mode),
      // The cache may not know the key yet: write-through always upserts.
      (cache) => cache.put(entry, "upsert"),
      (cache) => cache.put(entry, mode),
    );
  }

  override delete(namespace: string, key: string): Promise<boolean> {
    const call: Call<boolean> = (b) => b.delete(namespace, key);
    const at = new Date().toISOString();
    return this.#write({ op: "delete", namespace, key, at }, call, call, call);
  }

  override list(namespace: string, query: ListQuery): Promise<EntryPage> {
    return this.#read((b) => b.list(namespace, query), async (page) => {
      for (const entry of page.entries) await this.#fill(entry);
    });
  }

  // Housekeeping reads (counts for /metrics, the re-embedding job) are kept
  // out of the storage cache's hit rate, which is about callers' reads.
  override countByNamespace(): Promise<Record<string, number>> {
    return this.#read((b) => b.countByNamespace(), undefined, false);
  }

  override staleEmbeddings(
    embedder: string,
    limit: number,
  ): Promise<StoredEntry[]> {
    return this.#read(
      (b) => b.staleEmbeddings(embedder, limit),
      undefined,
      false,
    );
  }

  override setEmbedding(
    namespace: string,
    key: string,
    updatedAt: string,
    embedding: StoredEntry["embedding"],
  ): Promise<void> {
    const call: Call<void> = (b) =>
      b.setEmbedding(namespace, key, updatedAt, embedding);
    const op: QueuedOp = {
      op: "embedding",
      namespace,
      key,
      updated_at: updatedAt,
      embedding: embeddingJson(embedding),
    };
    return this.#write(op, call, call, call);
  }

  override appendMessages(
    namespace: string,
    sessionId: string,
    messages: Message[],
  ): Promise<number> {
    const call: Call<number> = (b) =>
      b.appendMessages(namespace, sessionId, messages);
    const op: QueuedOp = {
      op: "append",
      namespace,
      session_id: sessionId,
      messages,
    };
    return this.#write(op, call, call, call);
  }

  /** Asks the remote too while healthy, so a silent outage shows up here. */
  async health(): Promise<BackendHealth> {
    let detail: string | undefined;
    if (!this.#outage.active && this.#remote) {
      const remote: BackendHealth = await this.#remote.health().catch((
        error: unknown,
      ) => ({ status: "down", detail: messageOf(error) }));
      if (remote.status === "ok") {
        detail = remote.detail;
      } else {
        const reason = remote.detail ?? "health check failed";
        this.#enterOutage(new BackendUnavailable(reason));
      }
    }
    const dead = this.#queue.dead > 0
      ? `${this.#queue.dead} writes rejected by ${this.#name} are kept in the dead-letter list`
      : "";
    if (this.#outage.active) {
      const queued = this.#queue.queued;
      return {
        status: "degraded",
        detail:
          `${this.#name} unreachable since ${this.#outage.since}; ${queued} writes queued` +
          (dead ? `; ${dead}` : ""),
        queued_writes: queued,
      };
    }
    const text = [detail, dead].filter(Boolean).join("; ");
    return {
      status: "ok",
      ...(text ? { detail: text } : {}),
      queued_writes: 0,
    };
  }

  status(): StorageStatus {
    return {
      degraded: this.#outage.active,
      queued_writes: this.#queue.queued,
      cache_hits: this.#outage.cacheHits,
      cache_misses: this.#outage.cacheMisses,
    };
  }

  /** Stops the probe loop and closes both backends; the store stays open (its owner closes it). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#probing;
    await this.#connecting?.catch(() => {});
    await this.#queue.close();
    await Promise.all([this.#remote?.close(), this.#cache.close()]);
  }

  /** Reads without a cache refill: the remote while healthy, else the cache. */
  protected forward<R>(call: StorageCall<R>): Promise<R> {
    return this.#read(call);
  }

  /** Counts, while degraded, whether the cache had an answer (unless `counted` is false). */
  async #read<R>(
    call: Call<R>,
    fill?: (result: R) => Promise<void>,
    counted = true,
  ): Promise<R> {
    if (!this.#outage.active && this.#remote) {
      try {
        const result = await call(this.#remote);
        if (fill) await this.#updateCache(fill(result));
        return result;
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        this.#enterOutage(error);
      }
    }
    const result = await call(this.#cache);
    if (!counted) return result;
    this.#outage.countRead(result);
    return result;
  }

  /** A cache write after the remote answered: its failure is logged, not the call's. */
  #updateCache(write: Promise<unknown>): Promise<void> {
    return write.then(
      () => {},
      (error: unknown) =>
        this.#log.warn("memory_cache_write_failed", {
          error: messageOf(error),
        }),
    );
  }

  async #write<R>(
    op: QueuedOp,
    remoteCall: Call<R>,
    throughCache: Call<unknown>,
    degradedCache: Call<R>,
  ): Promise<R> {
    if (!this.#outage.active && this.#remote) {
      try {
        const result = await remoteCall(this.#remote);
        await this.#updateCache(throughCache(this.#cache));
        return result;
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        this.#enterOutage(error);
      }
    }
    this.#enterOutage(new BackendUnavailable(`${this.#name} is not connected`));
    // The queue place is taken now, so queue order is call order.
    const slot = this.#queue.reserve();
    this.#writing++;
    this.#started++;
    try {
      let result: R;
      try {
        result = await degradedCache(this.#cache);
      } catch (error) {
        slot.cancel();
        throw error;
      }
      await slot.commit(op);
      return result;
    } finally {
      this.#writing--;
    }
  }

  /** Refreshes the cache from the remote, unless the cache has this or a newer version. */
  async #fill(entry: StoredEntry): Promise<void> {
    if (this.#outage.active) return;
    const cached = await this.#cache.get(entry.namespace, entry.key);
    if (
      cached && Date.parse(cached.updated_at) >= Date.parse(entry.updated_at)
    ) return;
    await this.#cache.put(entry, "upsert");
  }

  /** Marks the outage and alerts once; later failures in the same outage stay quiet. */
  #enterOutage(error: unknown): void {
    if (this.#closed || !this.#outage.begin(error, this.#queue.queued)) return;
    this.#queue.setOutage(this.#outage.since).catch(() => {});
    this.#delay = this.#interval;
    this.#schedule(this.#interval);
  }

  /** Connects the remote once, however many callers ask at the same time. */
  async #ensureRemote(): Promise<void> {
    if (this.#remote || !this.#connector) return;
    this.#connecting ??= this.#connector.connect().finally(() => {
      this.#connecting = null;
    });
    const remote = await this.#connecting;
    if (this.#closed) await remote.close();
    else this.#remote ??= remote;
  }

  #schedule(delayMs: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#probing = this.#probe().finally(() => {
        this.#probing = null;
      });
    }, delayMs);
  }

  async #probe(): Promise<void> {
    try {
      await this.#ensureRemote();
      const remote = this.#remote;
      if (
        remote && (await remote.health()).status === "ok" &&
        await this.#drain(remote)
      ) return;
    } catch (error) {
      if (!isUnavailable(error)) {
        this.#log.warn("memory_hosted_probe_failed", {
          error: messageOf(error),
        });
      }
    }
    this.#delay = Math.min(this.#delay * 2, this.#maxInterval);
    this.#schedule(this.#delay);
  }

  /** Replays the queue in order; true once it is empty and the backend is healthy again. */
  async #drain(remote: MemoryBackend): Promise<boolean> {
    let synced = 0, superseded = 0, rejected = 0;
    for (;;) {
      if (this.#closed) return false;
      const started = this.#started;
      const items = await this.#queue.page(100);
      if (items.length === 0) {
        // Flip to healthy only when no degraded write is still on its way
        // into the queue; otherwise it would be stranded there.
        if (this.#writing === 0 && this.#started === started) break;
        await this.#queue.settled();
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      for (const item of items) {
        try {
          if (!item.op) {
            throw new Error(`unreadable queued write: ${item.problem}`);
          }
          if (await replay(remote, this.#cache, item.op)) synced++;
          else superseded++;
        } catch (error) {
          if (isUnavailable(error)) return false;
          rejected++;
          const dead = await this.#queue.deadLetter(item, messageOf(error));
          this.#log.error("memory_hosted_write_rejected", {
            backend: this.kind,
            ...describeOp(item.op),
            error: messageOf(error),
            dead_letters: this.#queue.dead,
            action: `kept aside under store key ${
              JSON.stringify(dead)
            }; it is not retried`,
          });
          continue;
        }
        await this.#queue.remove(item.key);
      }
    }
    this.#delay = this.#interval;
    // Said in the same tick as the flip: whoever sees health "ok" also finds
    // the recovery in the log (the write below used to come in between).
    this.#outage.end({ synced, superseded, rejected });
    await this.#queue.setOutage(null);
    return true;
  }
}

function isConnector(
  remote: MemoryBackend | RemoteConnector,
): remote is RemoteConnector {
  return "connect" in remote && !("get" in remote);
}
