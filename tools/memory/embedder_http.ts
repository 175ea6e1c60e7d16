// One POST to a remote embedding provider, with timeout and retries (429,
// 5xx, network), and the errors it reports: provider and URL, never the key.

import { z } from "zod";
import { messageOf } from "../../platform/errors.ts";
import {
  backoffDelay,
  isRetryableStatus,
  retryAfterMs,
  sleep,
} from "../../platform/http_retry.ts";

/** Failure of a remote embedder; the message names provider and URL, never the key. */
export class EmbedderError extends Error {
  override name = "EmbedderError";
  constructor(
    message: string,
    readonly provider: string,
    readonly url: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface RemoteOptions {
  /** Per request, default 30000. Timeouts are not retried: a slow server stays slow. */
  timeoutMs?: number;
  /** Texts per request, default 64. */
  batchSize?: number;
  /** Tries per request (429/5xx/network errors are retried), default 3. */
  maxAttempts?: number;
  /** First backoff delay, doubled per retry (Retry-After wins when given), default 500. */
  retryBaseMs?: number;
  /** Cap on one wait, including Retry-After, default 30000. */
  maxRetryDelayMs?: number;
  fetch?: typeof fetch;
}

export interface Provider {
  name: string;
  /** Shown in errors: the base URL or host, without the endpoint path. */
  url: string;
  endpoint: string;
  headers: Record<string, string>;
  /** The response's vectors by input position, or why the body is malformed. */
  parse: (json: unknown, count: number) => (number[] | undefined)[] | string;
  /** Scrubbed from error details (servers like to quote a rejected key). */
  secret?: string;
}

/** One POST with retries; returns the parsed JSON body of a 2xx answer. */
export async function request(
  provider: Provider,
  body: unknown,
  options: RemoteOptions,
  signal?: AbortSignal,
): Promise<unknown> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const baseDelay = options.retryBaseMs ?? 500;
  for (let attempt = 1;; attempt++) {
    const outcome = await attemptOnce(provider, body, options, signal);
    if (outcome.ok) return outcome.json;
    const { error, retryAfter } = outcome;
    if (attempt >= maxAttempts) {
      throw new EmbedderError(
        `${error.message} (gave up after ${attempt} attempts)`,
        provider.name,
        provider.url,
        error.status,
      );
    }
    const maxMs = options.maxRetryDelayMs ?? 30_000;
    const delay = retryAfter ??
      backoffDelay(attempt - 1, { baseMs: baseDelay, maxMs, jitter: false });
    await sleep(Math.min(maxMs, delay), signal);
  }
}

type Attempt =
  | { ok: true; json: unknown }
  | { ok: false; error: EmbedderError; retryAfter?: number };

/** Throws what retrying cannot fix; returns transient failures (429, 5xx, network). */
async function attemptOnce(
  provider: Provider,
  body: unknown,
  options: RemoteOptions,
  signal?: AbortSignal,
): Promise<Attempt> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await (options.fetch ?? fetch)(provider.endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", ...provider.headers },
      body: JSON.stringify(body),
      signal: signal
        ? AbortSignal.any([signal, timeout.signal])
        : timeout.signal,
    });
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    if (timeout.signal.aborted) {
      throw fail(
        provider,
        `did not answer within ${timeoutMs} ms (embedder_timeout_ms)`,
      );
    }
    const reason = messageOf(error);
    const what = `is unreachable: ${
      scrub(reason, provider.secret)
    }; is it running at that URL?`;
    return { ok: false, error: fail(provider, what) };
  } finally {
    clearTimeout(timer);
  }
  if (response.ok) {
    try {
      return { ok: true, json: JSON.parse(text) };
    } catch {
      throw fail(provider, "sent a body that is not JSON");
    }
  }
  const detail = scrub(
    errorDetail(text) || response.statusText,
    provider.secret,
  );
  const error = fail(
    provider,
    `answered ${response.status}: ${detail}`,
    response.status,
  );
  if (!isRetryableStatus(response.status)) throw error;
  return { ok: false, error, retryAfter: retryAfterMs(response.headers) };
}

export function fail(
  provider: Provider,
  what: string,
  status?: number,
): EmbedderError {
  return new EmbedderError(
    `Embedding provider ${provider.name} at ${provider.url} ${what}`,
    provider.name,
    provider.url,
    status,
  );
}

/** The human part of an error body: OpenAI `{error:{message}}`, Ollama `{error}`, or the text. */
function errorDetail(text: string): string {
  let detail = text;
  try {
    const json: unknown = JSON.parse(text);
    const parsed = z.object({
      error: z.union([z.string(), z.object({ message: z.string() })])
        .optional(),
      message: z.string().optional(),
      detail: z.string().optional(),
    }).safeParse(json);
    if (parsed.success) {
      const e = parsed.data.error;
      detail = (typeof e === "string" ? e : e?.message) ??
        parsed.data.message ??
        parsed.data.detail ?? text;
    }
  } catch {
    // Not JSON: use the text as it is.
  }
  detail = detail.replace(/\s+/g, " ").trim();
  return detail.length > 300 ? `${detail.slice(0, 297)}...` : detail;
}

function scrub(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}
