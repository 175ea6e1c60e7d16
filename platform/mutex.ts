// A promise-chain mutex: callers run one at a time, in arrival order.

export class Mutex {
  #tail: Promise<void> = Promise.resolve();
  #held = 0;

  /** Whether a caller holds the lock or waits for it. */
  get busy(): boolean {
    return this.#held > 0;
  }

  /** Runs `body` once every earlier caller has finished. */
  async run<T>(body: () => Promise<T>): Promise<T> {
    this.#held++;
    const previous = this.#tail;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#tail = promise;
    try {
      await previous;
      return await body();
    } finally {
      this.#held--;
      resolve();
    }
  }
}
