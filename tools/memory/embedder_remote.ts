// Clients for remote embedding servers: OpenAI-compatible (`/v1/embeddings`)
// and Ollama (`/api/embed`). The request itself: embedder_http.ts.

import { z } from "zod";
import type { Embedder } from "./model.ts";
import { normalize } from "./embedder_builtin.ts";
import { describeIssues } from "../../platform/validation.ts";
import {
  fail,
  type Provider,
  type RemoteOptions,
  request,
} from "./embedder_http.ts";

export const DEFAULT_OPENAI_URL = "https://api.openai.com/v1";
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
  readonly remote = true;
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
  if (!parsed.success) return describeIssues(parsed.error, { max: 1 });
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
          : describeIssues(parsed.error, { max: 1 });
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

export function trimSlash(url: string): string {
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
