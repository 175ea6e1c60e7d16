// The hosted backend's outage: when it began, the operator alerts that open
// and close it (log lines, and platform/alerts.ts: `alert` + webhook), and
// how well the local cache served reads meanwhile.

import { type AlertTarget, raiseAlert } from "../../../platform/alerts.ts";
import { messageOf } from "../../../platform/errors.ts";
import type { Logger } from "../../../platform/log.ts";

export class Outage {
  #since: string | null = null;
  /** Reads the cache answered (hit) or came back empty from (miss) while the remote was away. */
  cacheHits = 0;
  cacheMisses = 0;
  readonly #backend: string;
  readonly #log: Logger;
  readonly #alerts: AlertTarget;

  constructor(backend: string, alerts: AlertTarget) {
    this.#backend = backend;
    this.#log = alerts.log;
    this.#alerts = alerts;
  }

  get active(): boolean {
    return this.#since !== null;
  }

  get since(): string | null {
    return this.#since;
  }

  /** Goes on with an outage a previous run ended in (it was alerted then). */
  resume(since: string): void {
    this.#since = since;
  }

  /** Starts an outage and alerts once; returns false when one is already on. */
  begin(error: unknown, queued: number): boolean {
    if (this.#since !== null) return false;
    const since = new Date().toISOString();
    this.#since = since;
    this.#log.error("memory_hosted_unreachable", {
      backend: this.#backend,
      since,
      error: messageOf(error),
      action:
        "writes are kept locally and queued until it answers; check the server and network",
    });
    raiseAlert(this.#alerts, {
      event: "memory_storage_unavailable",
      backend: this.#backend,
      since,
      error: messageOf(error),
      queued_writes: queued,
    }, "problem");
    return true;
  }

  /** Ends the outage once the queue is drained, and says so in the same tick. */
  end(counts: { synced: number; superseded: number; rejected: number }): void {
    const since = this.#since;
    this.#since = null;
    this.#log.info("memory_hosted_recovered", {
      backend: this.#backend,
      since: since ?? undefined,
      synced_writes: counts.synced,
      superseded_writes: counts.superseded,
      rejected_writes: counts.rejected,
    });
    raiseAlert(this.#alerts, {
      event: "memory_storage_recovered",
      backend: this.#backend,
      since,
      synced_writes: counts.synced,
      rejected_writes: counts.rejected,
    }, "recovery");
  }

  /** Counts a read the cache served: a hit when it had an answer. */
  countRead(result: unknown): void {
    if (answered(result)) this.cacheHits++;
    else this.cacheMisses++;
  }
}

/** Whether a cache read found something (an entry, a page, hits, messages). */
function answered(result: unknown): boolean {
  if (result === null || result === undefined) return false;
  if (Array.isArray(result)) return result.length > 0;
  if (typeof result !== "object") return true;
  if ("entries" in result && Array.isArray(result.entries)) {
    return result.entries.length > 0;
  }
  if ("lexical" in result && Array.isArray(result.lexical)) {
    return result.lexical.length > 0 ||
      ("vector" in result && Array.isArray(result.vector) &&
        result.vector.length > 0);
  }
  return Object.keys(result).length > 0;
}
