// One provider's HTTP endpoint: POST with an idle timeout tied to the
// caller's signal, retries with backoff on 429/5xx/network errors, and every
// failure turned into a ProviderError a person can act on.
import { z } from "zod";
import type { Logger } from "../../platform/log.ts";
import { messageOf } from "../../platform/errors.ts";
import {
  backoffDelay,
  isRetryableStatus,
  retryAfterMs,
  sleep,
} from "../../platform/http_retry.ts";
import { ProviderError } from "../model.ts";
import { type SseEvent, SseParser } from "../../platform/sse.ts";

export interface EndpointOptions {
  provider: string;
  /** Without a trailing slash; paths are appended. */
  baseUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxRetries: number;
  log: Logger;
  fetchFn: typeof fetch;
  /** Scrubbed from provider error text: some servers echo the key they rejected. */
  secret?: string;
  /** When set, every call fails with this (unavailable) before any request is made. */
  problem?: string;
}

// Jitter spreads retries of many agents hitting the same rate limit.
const BACKOFF = { baseMs: 500, maxMs: 8000, jitter: true };
/** A longer retry-after is cut to this: an agent turn should not hang for minutes. */
const RETRY_AFTER_CAP_MS = 30000;
const ERROR_TEXT_MAX = 300;

/** Re-armed on every received chunk, so long streams live as long as bytes keep coming. */
class IdleDeadline {
  readonly #controller = new AbortController();
  #timer: ReturnType<typeof setTimeout> | undefined;
  constructor(private readonly ms: number) {
    this.arm();
  }
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
  get expired(): boolean {
    return this.#controller.signal.aborted;
  }
  arm(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#controller.abort(), this.ms);
  }
  clear(): void {
    clearTimeout(this.#timer);
  }
}

interface Opened {
  response: Response;
  deadline: IdleDeadline;
}

export class Endpoint {
  constructor(private readonly options: EndpointOptions) {}

  get provider(): string {
    return this.options.provider;
  }

  /** POSTs `body` as JSON and returns the parsed JSON answer. */
  async postJson(
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<unknown> {
    // One answer, not a stream: the body is read whole (no reader, no
    // re-armed timer per chunk), so the whole body must arrive within one
    // timeout after the headers; a streamed answer keeps its idle timer.
    const { response, deadline } = await this.#open(path, body, signal);
    let text: string;
    try {
      deadline.arm();
      text = await response.text();
    } catch (error) {
      throw this.#failure(error, deadline, signal, "lost the connection");
    } finally {
      deadline.clear();
    }
    try {
      return JSON.parse(text);
    } catch {
      throw this.badAnswer(`a response that is not JSON: ${clip(text)}`);
    }
  }

  /** POSTs `body` as JSON and yields the server-sent events of the answer. */
  async *postStream(
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): AsyncGenerator<SseEvent> {
    const parser = new SseParser({ unterminated: true });
    for await (const chunk of this.#read(path, body, signal)) {
      yield* parser.push(chunk);
    }
    yield* parser.end();
  }

  /** A bad_gateway failure for an answer we cannot use. */
  badAnswer(what: string): ProviderError {
    return new ProviderError(
      `Provider "${this.provider}" returned ${this.#scrub(clip(what, 400))}`,
      this.provider,
      "bad_gateway",
    );
  }

  /** A bad_gateway failure for an answer (JSON text or a parsed value) not of the expected shape. */
  unexpected(answer: unknown): ProviderError {
    const text = typeof answer === "string" ? answer : JSON.stringify(answer);
    return this.badAnswer(`an unexpected response: ${text}`);
  }

  /** A bad_gateway failure for a stream that stopped before the provider said it was done. */
  incompleteStream(): ProviderError {
    return this.badAnswer("a stream that ended before the answer was complete");
  }

  async *#read(
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): AsyncGenerator<string> {
    const { response, deadline } = await this.#open(path, body, signal);
    const stream = response.body;
    if (!stream) {
      deadline.clear();
      throw this.badAnswer("an empty response");
    }
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    try {
      while (true) {
        deadline.arm();
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          throw this.#failure(error, deadline, signal, "lost the connection");
        }
        if (chunk.done) break;
        yield decoder.decode(chunk.value, { stream: true });
      }
      const rest = decoder.decode();
      if (rest) yield rest;
    } finally {
      deadline.clear();
      // Frees the connection when the consumer stops early (error, abort).
      reader.cancel().catch(() => {});
    }
  }

  async #open(
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<Opened> {
    const { provider, problem, maxRetries, log } = this.options;
    if (problem) throw new ProviderError(problem, provider, "unavailable");
    const url = `${this.options.baseUrl}${path}`;
    const payload = JSON.stringify(body);
    for (let attempt = 0;; attempt++) {
      signal?.throwIfAborted();
      const deadline = new IdleDeadline(this.options.timeoutMs);
      const combined = signal
        ? AbortSignal.any([signal, deadline.signal])
        : deadline.signal;
      let response: Response;
      try {
        response = await this.options.fetchFn(url, {
          method: "POST",
          headers: this.options.headers,
          body: payload,
          signal: combined,
        });
      } catch (error) {
        deadline.clear();
        const failure = this.#failure(error, deadline, signal, "unreachable");
        if (failure.kind !== "unavailable" || attempt >= maxRetries) {
          throw failure;
        }
        const delay = backoffDelay(attempt, BACKOFF);
        log.warn("model_retry", {
          provider,
          attempt: attempt + 1,
          error: failure.message,
          delay_ms: delay,
        });
        await sleep(delay, signal);
        continue;
      }
      if (response.ok) return { response, deadline };

      const text = await readText(response, combined);
      deadline.clear();
      if (signal?.aborted) throw signal.reason;
      const status = response.status;
      if (isRetryableStatus(status) && attempt < maxRetries) {
        const delay = retryAfter(response.headers) ??
          backoffDelay(attempt, BACKOFF);
        log.warn("model_retry", {
          provider,
          attempt: attempt + 1,
          status,
          delay_ms: delay,
        });
        await sleep(delay, signal);
        continue;
      }
      throw this.#statusError(status, text, attempt);
    }
  }

  #statusError(status: number, text: string, retries: number): ProviderError {
    const { provider } = this.options;
    const detail = this.#scrub(clip(errorText(text)));
    const after = retries > 0 ? ` after ${retries + 1} attempts` : "";
    if (status === 429) {
      return new ProviderError(
        `Provider "${provider}" is rate limiting requests (HTTP 429)${after}: ${detail}`,
        provider,
        "unavailable",
      );
    }
    if (status >= 500) {
      return new ProviderError(
        `Provider "${provider}" failed (HTTP ${status})${after}: ${detail}`,
        provider,
        "bad_gateway",
      );
    }
    return new ProviderError(
      `Provider "${provider}" rejected the request (HTTP ${status}): ${detail}`,
      provider,
      "bad_gateway",
    );
  }

  /** Classifies a thrown fetch/read error; rethrows the caller's own abort as is. */
  #failure(
    error: unknown,
    deadline: IdleDeadline,
    signal: AbortSignal | undefined,
    what: "unreachable" | "lost the connection",
  ): ProviderError {
    if (signal?.aborted) throw signal.reason;
    const { provider, timeoutMs } = this.options;
    const where = displayUrl(this.options.baseUrl);
    if (deadline.expired) {
      return new ProviderError(
        `Provider "${provider}" at ${where} timed out: no answer within ${timeoutMs} ms`,
        provider,
        "gateway_timeout",
      );
    }
    const reason = this.#scrub(networkReason(error));
    return what === "unreachable"
      ? new ProviderError(
        `Provider "${provider}" at ${where} is unreachable: ${reason}`,
        provider,
        "unavailable",
      )
      : new ProviderError(
        `Provider "${provider}" at ${where} lost the connection mid-answer: ${reason}`,
        provider,
        "bad_gateway",
      );
  }

  #scrub(text: string): string {
    const secret = this.options.secret;
    return secret ? text.split(secret).join("[redacted]") : text;
  }
}

/** Reads an error body; an unreadable one is just empty. */
async function readText(
  response: Response,
  signal: AbortSignal,
): Promise<string> {
  try {
    if (signal.aborted) {
      await response.body?.cancel();
      return "";
    }
    return await response.text();
  } catch {
    return "";
  }
}

const ErrorBody = z.union([
  // OpenAI, Anthropic, OpenRouter, Ollama's /v1: {"error":{"message":…}}
  z.object({ error: z.object({ message: z.string() }) })
    .transform((b) => b.error.message),
  // Ollama's native API, llama.cpp: {"error":"…"}
  z.object({ error: z.string() }).transform((b) => b.error),
  // vLLM: {"object":"error","message":…}; FastAPI: {"detail":"…"}
  z.object({ message: z.string() }).transform((b) => b.message),
  z.object({ detail: z.string() }).transform((b) => b.detail),
]);

/** The provider's own error message when its body has a known shape, else the body. */
export function errorText(body: string): string {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(body));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON: fall through to the raw text
  }
  return body.trim().replace(/\s+/g, " ") || "(empty response)";
}

export function clip(text: string, max = ERROR_TEXT_MAX): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Origin and path only: a base URL may carry user:password. */
function displayUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    return `${url.origin}${url.pathname.replace(/\/$/, "")}`;
  } catch {
    return baseUrl;
  }
}

function networkReason(error: unknown): string {
  // Deno says "fetch failed" and puts the reason in the cause chain.
  const parts: string[] = [];
  for (let e = error, depth = 0; e !== undefined && depth < 5; depth++) {
    parts.push(messageOf(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  // A base URL's user:password must not reach error text.
  const text = parts.join(": ").replace(/\/\/[^/\s@]*@/g, "//");
  if (/connection refused/i.test(text)) return "connection refused";
  if (/connection reset/i.test(text)) return "connection reset";
  if (/dns|lookup|name resolution|not known/i.test(text)) {
    return "host not found";
  }
  if (/certificate|tls|ssl/i.test(text)) {
    return `TLS error (${clip(text, 200)})`;
  }
  return clip(text, 200);
}

/** `retry-after-ms` (OpenAI) or `retry-after` (seconds or an HTTP date), capped. */
export function retryAfter(
  headers: Headers,
  now = Date.now(),
): number | undefined {
  const ms = retryAfterMs(headers, now);
  return ms === undefined ? undefined : Math.min(ms, RETRY_AFTER_CAP_MS);
}
