// The Embedder port and its implementations: a built-in feature-hashing
// embedder that needs no download, and clients for OpenAI-compatible
// (`/v1/embeddings`) and Ollama (`/api/embed`) servers.

import { z } from "zod";
import { tokenize } from "./search_index.ts";
import { messageOf } from "../../platform/errors.ts";

export interface Embedder {
  /** Stored with every embedding; vectors are only compared within one id. */
  readonly id: string;
  /** One L2-normalised vector per text, in order. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  /**
   * How much the vector ranking counts in hybrid search: its weight in the
   * rank fusion (lexical is 1) and the least cosine similarity a vector hit
   * needs. Default: weight 1, any positive similarity.
   */
  readonly fusion?: { weight: number; minSimilarity: number };
}

// ---- built-in ------------------------------------------------------------------

const BUILTIN_DIMS = 256;

/**
 * Feature hashing (the "hashing trick"): word unigrams, word bigrams and the
 * character 3-grams of each word are hashed (FNV-1a, then a murmur3 finaliser)
 * into 256 signed buckets, weighted 1 + ln(tf), and L2-normalised.
 *
 * Be honest about what this is: lexical similarity with some tolerance for
 * morphology and typos (shared 3-grams), not semantics. "car" and "automobile"
 * are unrelated to it. It exists so hybrid search works offline and
 * deterministically; configure openai or ollama for real semantic recall.
 * Changing anything here (or `tokenize`) changes vectors: bump the id's version
 * so stored vectors are recomputed rather than compared with new ones.
 */
export class BuiltinEmbedder implements Embedder {
  readonly id = `builtin:hash-v1:${BUILTIN_DIMS}`;
  // Its vectors mostly restate lexical overlap, so weak vector hits only add
  // noise to the fusion: measured by bench/memory_quality_bench.ts, where
  // weight 1 with any similarity scored recall@5 0.79 against lexical's 0.88.
  readonly fusion = { weight: 0.5, minSimilarity: 0.25 };

  embed(texts: string[]): Promise<Float32Array[]> {
    return Promise.resolve(texts.map(hashEmbed));
  }
}

function hashEmbed(text: string): Float32Array {
  const words = tokenize(text);
  const counts = new Map<string, { weight: number; tf: number }>();
  const add = (feature: string, weight: number) => {
    const seen = counts.get(feature);
    if (seen) seen.tf++;
    else counts.set(feature, { weight, tf: 1 });
  };
  words.forEach((word, i) => {
    add(`w:${word}`, 1);
    if (i > 0) add(`b:${words[i - 1]} ${word}`, 0.7);
    const padded = `<${word}>`;
    // Many 3-grams per word: scale them so the word itself still dominates.
    const gramWeight = 0.5 / Math.sqrt(Math.max(1, padded.length - 2));
    for (let j = 0; j + 3 <= padded.length; j++) {
      add(`c:${padded.slice(j, j + 3)}`, gramWeight);
    }
  });
  const vector = new Float32Array(BUILTIN_DIMS);
  for (const [feature, { weight, tf }] of counts) {
    const h = mix(fnv1a(feature));
    const sign = (h >>> 31) === 0 ? 1 : -1;
    vector[h % BUILTIN_DIMS] += sign * weight * (1 + Math.log(tf));
  }
  return normalize(vector);
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** murmur3's fmix32: FNV's low bits are weak, and the bucket is taken from them. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Scales to unit length in place; an all-zero vector (no words) stays zero. */
function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < vector.length; i++) vector[i] *= scale;
  }
  return vector;
}

export const DEFAULT_OPENAI_URL = "https://api.openai.com/v1";

// ---- remote providers ------------------------------------------------------------

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

interface Provider {
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

const OpenAiResponse = z.object({
  data: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      embedding: z.array(z.number()),
    }),
  ),
});

const OllamaResponse = z.object({ embeddings: z.array(z.array(z.number())) });

/** Both wire formats take `{model, input: string[]}`; they differ in path and answer. */
class RemoteEmbedder implements Embedder {
  constructor(
    readonly id: string,
    private readonly provider: Provider,
    private readonly model: string,
    private readonly options: RemoteOptions,
  ) {}

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const size = Math.max(1, this.options.batchSize ?? 64);
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += size) {
      const input = texts.slice(i, i + size);
      const body = { model: this.model, input };
      const json = await request(this.provider, body, this.options, signal);
      const parsed = this.provider.parse(json, input.length);
      const vectors = typeof parsed === "string"
        ? parsed
        : checkVectors(parsed, input.length);
      if (typeof vectors === "string") {
        throw fail(this.provider, `sent an unexpected response: ${vectors}`);
      }
      out.push(...vectors);
    }
    return out;
  }
}

/** Any OpenAI-compatible `/embeddings` endpoint: OpenAI, vLLM, llama.cpp, OpenRouter, LM Studio. */
export class OpenAiEmbedder extends RemoteEmbedder {
  constructor(
    config:
      & { baseUrl?: string; apiKey?: string; model: string }
      & RemoteOptions,
  ) {
    const url = trimSlash(config.baseUrl ?? DEFAULT_OPENAI_URL);
    const headers: Record<string, string> = {};
    if (config.apiKey) headers.authorization = `Bearer ${config.apiKey}`;
    const provider: Provider = {
      name: "openai",
      url: shown(url),
      endpoint: `${url}/embeddings`,
      headers,
      parse: parseOpenAi,
      secret: config.apiKey,
    };
    super(`openai:${config.model}`, provider, config.model, config);
  }
}

function parseOpenAi(
  json: unknown,
  count: number,
): (number[] | undefined)[] | string {
  const parsed = OpenAiResponse.safeParse(json);
  if (!parsed.success) return describeIssue(parsed.error);
  const vectors: (number[] | undefined)[] = new Array(count);
  for (const item of parsed.data.data) {
    if (item.index >= count || vectors[item.index]) {
      return `data[].index ${item.index} is out of range or repeated`;
    }
    vectors[item.index] = item.embedding;
  }
  return vectors;
}

export class OllamaEmbedder extends RemoteEmbedder {
  constructor(config: { host?: string; model: string } & RemoteOptions) {
    const url = ollamaBaseUrl(config.host ?? "");
    const provider: Provider = {
      name: "ollama",
      url: shown(url),
      endpoint: `${url}/api/embed`,
      headers: {},
      parse: (json) => {
        const parsed = OllamaResponse.safeParse(json);
        return parsed.success
          ? parsed.data.embeddings
          : describeIssue(parsed.error);
      },
    };
    super(`ollama:${config.model}`, provider, config.model, config);
  }
}

/**
 * Accepts what OLLAMA_HOST accepts: `host`, `host:port`, `scheme://host[:port]`.
 * Without a scheme the port defaults to 11434, as in Ollama's own client.
 */
export function ollamaBaseUrl(host: string): string {
  const text = host.trim() || "127.0.0.1:11434";
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text);
  let url: URL;
  try {
    url = new URL(withScheme ? text : `http://${text}`);
  } catch {
    throw new Error(`Ollama host "${host}" is not a host, host:port or URL`);
  }
  if (!withScheme && url.port === "") url.port = "11434";
  return trimSlash(url.href);
}

/** The URL shown in errors and logs: without user:password, should anyone put them there. */
function shown(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = "";
    parsed.password = "";
    return trimSlash(parsed.href);
  } catch {
    return url;
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/** Normalised copies of the vectors, or why they are unusable. */
function checkVectors(
  vectors: (number[] | undefined)[],
  count: number,
): Float32Array[] | string {
  if (vectors.length !== count) {
    return `expected ${count} embeddings, got ${vectors.length}`;
  }
  const out: Float32Array[] = [];
  const dims = vectors[0]?.length ?? 0;
  for (const [i, v] of vectors.entries()) {
    if (!v) return `embedding ${i} is missing`;
    if (v.length === 0 || v.length !== dims) {
      return `embedding ${i} has ${v.length} dimensions, expected ${dims}`;
    }
    out.push(normalize(Float32Array.from(v)));
  }
  return out;
}

/** One POST with retries; returns the parsed JSON body of a 2xx answer. */
async function request(
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
    const backoff = baseDelay * 2 ** (attempt - 1);
    await sleep(
      Math.min(options.maxRetryDelayMs ?? 30_000, retryAfter ?? backoff),
      signal,
    );
  }
}

type Attempt =
  | { ok: true; json: unknown }
  | { ok: false; error: EmbedderError; retryAfter: number | null };

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
    return { ok: false, error: fail(provider, what), retryAfter: null };
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
  if (response.status !== 429 && response.status < 500) throw error;
  return {
    ok: false,
    error,
    retryAfter: parseRetryAfter(response.headers.get("retry-after")),
  };
}

function fail(
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

/** Seconds or an HTTP date; null when absent or unreadable. */
function parseRetryAfter(value: string | null): number | null {
  if (value === null || value.trim() === "") return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid shape";
  const path = issue.path.map(String).join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

// ---- configuration ----------------------------------------------------------------

/** Flat keys of the memory server's config section (and `agentd mcp memory` flags). */
export const EmbedderConfig = z.object({
  embedder: z.enum(["builtin", "openai", "ollama"]).default("builtin")
    .describe(
      "builtin (no download), openai (any OpenAI-compatible /v1/embeddings) or ollama",
    ),
  embedder_model: z.string().min(1).optional()
    .describe(
      "Model; default text-embedding-3-small (openai) or nomic-embed-text (ollama)",
    ),
  embedder_url: z.string().min(1).optional()
    .describe(
      "openai: base URL (default https://api.openai.com/v1); ollama: host (default OLLAMA_HOST)",
    ),
  // The key itself never goes in config, only the name of the variable holding it.
  embedder_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    error: "expected an environment variable name",
  }).default("OPENAI_API_KEY")
    .describe(
      "Environment variable holding the API key (default OPENAI_API_KEY)",
    ),
  embedder_timeout_ms: z.number().int().min(1).max(600_000).default(30_000)
    .describe("Timeout per embedding request"),
  embedder_batch_size: z.number().int().min(1).max(2048).default(64)
    .describe("Texts per embedding request"),
});
export type EmbedderConfig = z.output<typeof EmbedderConfig>;

export function createEmbedder(
  config: EmbedderConfig,
  env: Record<string, string | undefined>,
): Embedder {
  const remote = {
    timeoutMs: config.embedder_timeout_ms,
    batchSize: config.embedder_batch_size,
  };
  switch (config.embedder) {
    case "builtin":
      return new BuiltinEmbedder();
    case "ollama":
      return new OllamaEmbedder({
        ...remote,
        host: config.embedder_url ?? env.OLLAMA_HOST,
        model: config.embedder_model ?? "nomic-embed-text",
      });
    case "openai": {
      const baseUrl = trimSlash(config.embedder_url ?? DEFAULT_OPENAI_URL);
      try {
        new URL(baseUrl);
      } catch {
        throw new Error(
          `embedder_url "${baseUrl}" is not a URL; expected e.g. ${DEFAULT_OPENAI_URL}`,
        );
      }
      const apiKey = env[config.embedder_key_env] || undefined;
      // Local OpenAI-compatible servers (vLLM, llama.cpp) usually need no key.
      if (!apiKey && baseUrl === DEFAULT_OPENAI_URL) {
        throw new Error(
          `The openai embedder needs an API key: set ${config.embedder_key_env} ` +
            "(or name another variable with embedder_key_env)",
        );
      }
      return new OpenAiEmbedder({
        ...remote,
        baseUrl,
        apiKey,
        model: config.embedder_model ?? "text-embedding-3-small",
      });
    }
  }
}
