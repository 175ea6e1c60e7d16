// Run leases: while a run executes here, its ["active_run", id] record says
// who runs it and when it last said so; each renewal also reads whether
// someone asked (through any daemon) to cancel it. A daemon sharing the store marks a
// run interrupted only when its lease is stale or its process is gone, so a
// live peer's runs survive another daemon's start (docs/multi_daemon.md).

import { messageOf } from "../platform/errors.ts";
import type { Logger } from "../platform/log.ts";
import type {
  CancelRequest,
  InterruptReason,
  Repository,
  RunLease,
} from "./repository.ts";

/** A run's lease is renewed this often; one not renewed for three times as long is a dead process's. */
export const LEASE_RENEW_MS = 10_000;

export class RunLeases {
  /** Owner of this process's run leases. */
  readonly instanceId: string = crypto.randomUUID();
  readonly #repository: Repository;
  readonly #log: Logger;
  readonly #now: () => string;
  readonly #renewMs: number;
  readonly #onCancelRequested: (id: string, request: CancelRequest) => void;
  readonly #host = Deno.hostname();
  /** The runs executing here (their leases are renewed). */
  readonly #runs = new Set<string>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #tick: Promise<void> | undefined;
  #stopped = false;

  constructor(options: {
    repository: Repository;
    log: Logger;
    now: () => string;
    renewMs?: number;
    /** A run executing here was asked to stop (seen at a renewal). */
    onCancelRequested?: (id: string, request: CancelRequest) => void;
  }) {
    this.#repository = options.repository;
    this.#onCancelRequested = options.onCancelRequested ?? (() => {});
    this.#log = options.log;
    this.#now = options.now;
    this.#renewMs = options.renewMs ?? LEASE_RENEW_MS;
  }

  /** Interrupts what dead processes left running, then renews and sweeps every interval until stop(). */
  async start(): Promise<void> {
    await this.#interruptDeadRuns();
    this.#schedule();
  }

  /** The lease to write with every save of a run executing here. */
  lease(): RunLease {
    return {
      owner: this.instanceId,
      host: this.#host,
      pid: Deno.pid,
      heartbeat_at: this.#now(),
    };
  }

  hold(runId: string): void {
    this.#runs.add(runId);
  }

  /** Before the final save, so a renewal racing it is not taken for a lost lease. */
  release(runId: string): void {
    this.#runs.delete(runId);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#tick;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.#renewAndSweep().finally(() => {
        this.#tick = undefined;
        this.#schedule();
      });
    }, this.#renewMs);
  }

  /** Renews this process's leases first, so the sweep never finds them stale. */
  async #renewAndSweep(): Promise<void> {
    try {
      for (const id of [...this.#runs]) {
        const renewed = await this.#repository.renewLease(id, this.lease());
        if (!renewed && this.#runs.has(id)) {
          this.#log.warn("run_lease_lost", {
            run: id,
            hint:
              "another daemon on this store marked the run interrupted (this process stalled past the lease); the run goes on and its next save records it again",
          });
        }
        // A cancel asked through another daemon on the store.
        const cancel = await this.#repository.cancelRequest(id);
        if (cancel !== undefined && this.#runs.has(id)) {
          this.#onCancelRequested(id, cancel);
        }
      }
      await this.#interruptDeadRuns();
    } catch (error) {
      this.#log.warn("run_lease_failed", { error: messageOf(error) });
    }
  }

  async #interruptDeadRuns(): Promise<void> {
    const interrupted = await this.#repository.interruptActiveRuns(
      this.#now(),
      { staleMs: 3 * this.#renewMs, host: this.#host },
    );
    if (interrupted.length === 0) return;
    const reasons: Partial<Record<InterruptReason, number>> = {};
    for (const { reason } of interrupted) {
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    this.#log.warn("runs_interrupted", {
      count: interrupted.length,
      reasons,
      runs: interrupted.map((run) => run.id),
    });
  }
}
