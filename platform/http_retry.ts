// Retrying a request to a remote HTTP API (model providers, embedders): which
// answers are worth another try, how long to wait before it, and a wait the
// caller's signal can cut short.

/** 429 and 5xx: the same request may succeed in a moment; other errors will not. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

export interface BackoffOptions {
  /** The first delay, doubled per retry. */
  baseMs: number;
  /** Cap on one delay. */
  maxMs: number;
  /** Waits a random 50–100 % of the delay, so clients hitting the same limit spread out. */
  jitter: boolean;
}

/** The delay before retry `attempt` (0 for the first retry). */
export function backoffDelay(attempt: number, options: BackoffOptions): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** attempt);
  if (!options.jitter) return ceiling;
  return Math.round(ceiling * (0.5 + Math.random() * 0.5));
}

/**
 * The server's own wait, in ms: `retry-after-ms` (OpenAI) or `retry-after`
 * (seconds or an HTTP date); undefined when absent or unreadable. Uncapped.
 */
export function retryAfterMs(
  headers: Headers,
  now = Date.now(),
): number | undefined {
  const ms = Number(headers.get("retry-after-ms") ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Resolves after `ms`; rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
