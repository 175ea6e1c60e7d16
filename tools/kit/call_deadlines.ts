// The deadlines of calls in flight on one timer. A call on a direct link
// (tool_call.ts `directLink`: every gateway call of a built-in server) set
// and cleared a timer of its own: with a few hundred calls in flight (Deno
// keeps its timers in a heap) that was about 1% of a busy daemon's main
// thread in bench/sessions_bench.ts. Here a call's deadline is a set entry;
// the one timer waits for the earliest and is moved only when an earlier one
// comes (calls of one link share a timeout, so a later call's is later).

interface Deadline {
  at: number;
  fire: () => void;
}

export class CallDeadlines {
  readonly #pending = new Set<Deadline>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires; Infinity when none is set. */
  #timerAt = Infinity;

  /** Runs `fire` in `ms` unless the returned cancel runs first. */
  add(ms: number, fire: () => void): () => void {
    const deadline = { at: performance.now() + ms, fire };
    this.#pending.add(deadline);
    if (deadline.at < this.#timerAt) this.#arm(deadline.at);
    return () => {
      this.#pending.delete(deadline);
      // The last call gone: no timer keeps the process alive for nothing.
      if (this.#pending.size === 0) this.#disarm();
    };
  }

  get size(): number {
    return this.#pending.size;
  }

  #arm(at: number): void {
    this.#disarm();
    this.#timerAt = at;
    this.#timer = setTimeout(
      () => this.#expire(),
      Math.max(0, at - performance.now()),
    );
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  #expire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = performance.now();
    const due: Deadline[] = [];
    let next = Infinity;
    for (const deadline of this.#pending) {
      if (deadline.at <= now) due.push(deadline);
      else if (deadline.at < next) next = deadline.at;
    }
    for (const deadline of due) this.#pending.delete(deadline);
    if (next !== Infinity) this.#arm(next);
    for (const deadline of due) deadline.fire();
  }
}
