// The turns and runs in progress in this process: each gets an abort signal
// the shutdown can pull, turns of one conversation run one at a time, and a
// closing service refuses new work (Unavailable) while the running work drains.

import { AsyncLocalStorage } from "node:async_hooks";
import { Unavailable } from "./errors.ts";
import { Mutex } from "../platform/mutex.ts";

interface Entry {
  controller: AbortController;
  done: Promise<unknown>;
}

export class Work {
  readonly #running = new Set<Entry>();
  readonly #locks = new Map<string, Mutex>();
  /**
   * The keys (conversations, team runs) the running code is inside: a turn
   * whose tool asks for its own conversation (an agent that sends itself a
   * message through the gateway's agents__send) would wait for itself.
   */
  readonly #inside = new AsyncLocalStorage<readonly string[]>();
  #closing = false;

  assertOpen(): void {
    if (this.#closing) {
      throw new Unavailable(
        "agentd is shutting down; retry after it restarts or on another instance",
      );
    }
  }

  /** Runs `body` with a signal aborted by `outer` or by close(). */
  async run<T>(
    outer: AbortSignal | undefined,
    body: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    const signal = outer
      ? AbortSignal.any([outer, controller.signal])
      : controller.signal;
    const done = body(signal);
    const entry = { controller, done };
    this.#running.add(entry);
    try {
      return await done;
    } catch (error) {
      if (controller.signal.aborted && !outer?.aborted) {
        throw new Unavailable(
          "agentd shut down during this turn; send the message again after it restarts",
        );
      }
      throw error;
    } finally {
      this.#running.delete(entry);
      for (const [key, mutex] of this.#locks) {
        if (!mutex.busy) this.#locks.delete(key);
      }
    }
  }

  /** Runs `body` after every earlier caller with the same key (one conversation at a time). */
  serial<T>(key: string, body: () => Promise<T>): Promise<T> {
    let mutex = this.#locks.get(key);
    if (!mutex) {
      mutex = new Mutex();
      this.#locks.set(key, mutex);
    }
    return mutex.run(() => this.within(key, body));
  }

  /** Whether the calling code runs inside `key` (a serial body or `within` of it). */
  inside(key: string): boolean {
    return this.#inside.getStore()?.includes(key) === true;
  }

  /** Runs `body` marked as inside `key`, and inside what the caller is. */
  within<T>(key: string, body: () => Promise<T>): Promise<T> {
    return this.#inside.run([...this.#inside.getStore() ?? [], key], body);
  }

  /** Refuses new work, waits up to `timeoutMs` for running work, then aborts what is left. */
  async close(timeoutMs: number): Promise<void> {
    this.#closing = true;
    const running = [...this.#running];
    if (running.length === 0) return;
    const all = Promise.allSettled(running.map((entry) => entry.done));
    const timer = Promise.withResolvers<void>();
    const id = setTimeout(timer.resolve, timeoutMs);
    await Promise.race([all, timer.promise]);
    clearTimeout(id);
    for (const entry of running) {
      entry.controller.abort(new Error("agentd is shutting down"));
    }
    await all;
  }
}
