// The memory server's numbers: operations per second, search latency, the
// storage cache's and the query-embedding cache's hit rates, degraded state,
// queued writes and entries per namespace, for /health and /metrics.

import {
  LatencyWindow,
  type Metric,
  RateMeter,
} from "../../platform/metrics.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import type { MemoryBackend } from "./backends/port.ts";
import type { StorageStatus } from "./model.ts";

export class MemoryStats {
  readonly #operations = new Map<string, number>();
  readonly #failures = new Map<string, number>();
  readonly #rate: RateMeter;
  readonly search = new LatencyWindow(1024);
  cacheHits = 0;
  cacheMisses = 0;
  denied = 0;
  reindexed = 0;
  #counts: Record<string, number> = {};

  constructor(clock: () => number) {
    this.#rate = new RateMeter(60_000, clock);
  }

  /** Runs one storage operation, counting it (and its failure). */
  async time<T>(operation: string, run: () => Promise<T>): Promise<T> {
    this.#operations.set(operation, (this.#operations.get(operation) ?? 0) + 1);
    this.#rate.mark();
    try {
      return await run();
    } catch (error) {
      this.#failures.set(operation, (this.#failures.get(operation) ?? 0) + 1);
      throw error;
    }
  }

  observeSearch(ms: number): void {
    this.#operations.set("search", (this.#operations.get("search") ?? 0) + 1);
    this.#rate.mark();
    this.search.observe(ms);
  }

  /** Re-reads entry counts from the backend; keeps the last ones when it cannot answer. */
  async refreshCounts(
    backend: MemoryBackend,
  ): Promise<{ [namespace: string]: number }> {
    try {
      this.#counts = await backend.countByNamespace();
    } catch {
      // the backend's own health says why
    }
    return this.#counts;
  }

  /** Of the query-embedding cache. */
  get cacheHitRate(): number | null {
    return hitRate(this.cacheHits, this.cacheMisses);
  }

  summary(storage: StorageStatus | undefined): { [key: string]: JsonValue } {
    const p50 = this.search.quantile(0.5);
    const p95 = this.search.quantile(0.95);
    return {
      ops_per_second: Number(this.#rate.perSecond().toFixed(3)),
      operations: Object.fromEntries(this.#operations),
      search_latency_ms: {
        p50: Number.isNaN(p50) ? null : Number(p50.toFixed(2)),
        p95: Number.isNaN(p95) ? null : Number(p95.toFixed(2)),
        count: this.search.count,
      },
      ...(storage
        ? {
          storage_cache: {
            hits: storage.cache_hits,
            misses: storage.cache_misses,
            hit_rate: hitRate(storage.cache_hits, storage.cache_misses),
          },
        }
        : {}),
      query_cache: {
        hits: this.cacheHits,
        misses: this.cacheMisses,
        hit_rate: this.cacheHitRate,
      },
      access_denied: this.denied,
      reindexed: this.reindexed,
    };
  }

  metrics(storage: StorageStatus | undefined): Metric[] {
    return [
      ...(storage ? storageMetrics(storage) : []),
      {
        name: "agentd_memory_operations_total",
        help: "Memory operations by kind",
        type: "counter",
        samples: [...this.#operations].map(([operation, value]) => ({
          labels: { operation },
          value,
        })),
      },
      {
        name: "agentd_memory_operation_failures_total",
        help: "Memory operations that failed, by kind",
        type: "counter",
        samples: [...this.#failures].map(([operation, value]) => ({
          labels: { operation },
          value,
        })),
      },
      {
        name: "agentd_memory_search_latency_ms",
        help:
          "search_memory and cross_reference latency in milliseconds (recent searches)",
        type: "summary",
        samples: this.search.samples(),
      },
      {
        name: "agentd_memory_query_cache_total",
        help: "Query embedding cache lookups by result",
        type: "counter",
        samples: [
          { labels: { result: "hit" }, value: this.cacheHits },
          { labels: { result: "miss" }, value: this.cacheMisses },
        ],
      },
      {
        name: "agentd_memory_entries",
        help: "Entries per namespace (as of the last health check)",
        type: "gauge",
        samples: Object.entries(this.#counts).map(([namespace, value]) => ({
          labels: { namespace },
          value,
        })),
      },
      {
        name: "agentd_memory_access_denied_total",
        help: "Calls refused because an agent reached outside its namespace",
        type: "counter",
        samples: [{ value: this.denied }],
      },
    ];
  }
}

function hitRate(hits: number, misses: number): number | null {
  const total = hits + misses;
  return total === 0 ? null : Number((hits / total).toFixed(4));
}

/** The store's state: degraded, the write queue, and the local cache serving reads meanwhile. */
function storageMetrics(storage: StorageStatus): Metric[] {
  return [
    {
      name: "agentd_memory_storage_degraded",
      help:
        "1 while the memory store is unreachable (reads from the local cache, writes queued)",
      type: "gauge",
      samples: [{ value: storage.degraded ? 1 : 0 }],
    },
    {
      name: "agentd_memory_queued_writes",
      help: "Writes queued locally until the hosted store answers",
      type: "gauge",
      samples: [{ value: storage.queued_writes }],
    },
    {
      name: "agentd_memory_storage_cache_total",
      help:
        "Reads the local storage cache served while the hosted store was away, by result",
      type: "counter",
      samples: [
        { labels: { result: "hit" }, value: storage.cache_hits },
        { labels: { result: "miss" }, value: storage.cache_misses },
      ],
    },
  ];
}
