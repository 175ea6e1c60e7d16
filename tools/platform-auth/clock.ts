// The Clock port: what time it is and when to wake up. Tokens expire and
// refreshes are scheduled on this clock, so tests can move time.

export interface Clock {
  now(): number;
  /** Calls `run` after `ms`; returns a handle for `cancel`. */
  schedule(run: () => void, ms: number): number;
  cancel(handle: number): void;
}

/** Longest delay setTimeout keeps (about 24.8 days); later timers wake early and re-arm. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  schedule: (run, ms) =>
    Number(setTimeout(run, Math.min(MAX_DELAY_MS, Math.max(0, ms)))),
  cancel: (handle) => clearTimeout(handle),
};

/** A clock that moves only when told: `advance` runs every timer that falls due. */
export class ManualClock implements Clock {
  #now: number;
  #next = 1;
  readonly #timers = new Map<number, { at: number; run: () => void }>();

  constructor(start = Date.now()) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  schedule(run: () => void, ms: number): number {
    const handle = this.#next++;
    // Zero delays (retries without backoff) run now: nothing would advance to them.
    if (ms <= 0) {
      queueMicrotask(run);
      return handle;
    }
    this.#timers.set(handle, { at: this.#now + Math.max(0, ms), run });
    return handle;
  }

  cancel(handle: number): void {
    this.#timers.delete(handle);
  }

  /** Timers waiting now (for tests). */
  get pending(): number {
    return this.#timers.size;
  }

  advance(ms: number): void {
    this.#now += ms;
    const due = [...this.#timers.entries()]
      .filter(([, timer]) => timer.at <= this.#now)
      .sort(([, a], [, b]) => a.at - b.at);
    for (const [handle, timer] of due) {
      this.#timers.delete(handle);
      timer.run();
    }
  }
}

/** Resolves after `ms` on `clock`. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.schedule(resolve, ms));
}
