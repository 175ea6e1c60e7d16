// Deadlines on everything the gateway awaits outside the process (an
// upstream's answers, the store, the DNS): the error names the step, the
// time allowed and the config setting that allows it.

import type { Store } from "../../platform/store/mod.ts";

/** An outside call that did not answer in time. */
export class DeadlineExceeded extends Error {
  override name = "DeadlineExceeded";
}

export interface Deadline {
  /** What was awaited: `initialize`, `tools/list`, `a store commit`, … */
  step: string;
  ms: number;
  /** The config setting that sets `ms`, e.g. `connect_timeout_ms`. */
  setting: string;
}

/** `1.5 s`, `20 s`, `250 ms`: how a person reads a deadline. */
export function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** `promise`, or a DeadlineExceeded saying "no answer to <step> within <ms> (<setting>)". */
export async function withDeadline<T>(
  promise: Promise<T>,
  deadline: Deadline,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new DeadlineExceeded(
            `no answer to ${deadline.step} within ${
              duration(deadline.ms)
            } (${deadline.setting})`,
          ),
        ),
      deadline.ms,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `store` with every read and write bounded by `ms` (`store_timeout_ms`): a
 * store behind a server (PostgreSQL, KV Connect) that stops answering must
 * not hold register_server, a refresh or a discovery round. The error names
 * the store: `whose` ("the daemon's"), its kind, and its URL when it shows
 * one (PgStore's `url` carries no password).
 */
export function storeWithDeadline(
  store: Store,
  options: { ms: number; whose: string },
): Store {
  const { ms } = options;
  const url = Reflect.get(store, "url");
  const where = `${options.whose} ${store.kind} store${
    typeof url === "string" ? ` at ${url}` : ""
  }`;
  const bounded = <T>(operation: string, promise: Promise<T>) =>
    withDeadline(promise, {
      step: `${operation} on ${where}`,
      ms,
      setting: "store_timeout_ms",
    });
  return {
    kind: store.kind,
    ping: store.ping?.bind(store),
    get: (key) => bounded("a read", store.get(key)),
    getMany: (keys) => bounded("a read", store.getMany(keys)),
    set: (key, value) => bounded("a write", store.set(key, value)),
    delete: (key) => bounded("a delete", store.delete(key)),
    list: (prefix, options) => bounded("a list", store.list(prefix, options)),
    commit: (op) => bounded("a commit", store.commit(op)),
    changeMark: store.changeMark?.bind(store),
    unchangedBetween: store.unchangedBetween?.bind(store),
    flush: () => store.flush(),
    close: () => store.close(),
  };
}
