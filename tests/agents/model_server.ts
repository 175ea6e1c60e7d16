// A local stand-in for paid model APIs: one HTTP server that speaks both the
// OpenAI Chat Completions and the Anthropic Messages wire formats, JSON and
// SSE (per the request's `stream`), answering from a per-test script.
//
//   await using server = await startModelServer();
//   server.script([
//     { tool_calls: [{ name: "memory__store_memory", arguments: { key: "k" } }] },
//     { text: "Stored it." },
//   ]);
//   const models = createModelResolver({ config: {}, env: server.env, log });
//   const model = models.resolve("openai/test-model"); // or "anthropic/…"
//   … run the agent …
//   assert.equal(server.requests.length, 2);
//   server.requests[1].body.messages; // what the provider sent, parsed
//
// - Each model call (either API) consumes the next step; with none left the
//   answer is `next(body)` when given, else DEFAULT_REPLY. A step can hold
//   text, tool calls or both.
// - Streams are realistic: text in several deltas, tool-call arguments split
//   across fragments, usage at the end (OpenAI: only with include_usage).
// - `delay_ms` holds the response headers back; `chunk_delay_ms` spaces the
//   streamed events: for timeout and cancellation tests.
// - `failNext(status, times)` answers the next calls with a provider-shaped
//   error (steps are not consumed); every request is recorded, failed or not.
// - A request breaking a rule the real API enforces (e.g. a tool call without
//   its result, `system` as an Anthropic role) gets the real API's 400.

import {
  type Answer,
  anthropicEvents,
  anthropicJson,
  apiError,
  openaiEvents,
  openaiJson,
} from "./providers/wire_answers.ts";
import {
  anthropicProblem,
  isRecord,
  openaiProblem,
} from "./providers/wire_rules.ts";

export const DEFAULT_REPLY = "Hello from the model server.";
export const TEST_API_KEY = "sk-model-server-test-key-0123456789";

export interface ScriptStep {
  text?: string;
  tool_calls?: { name: string; arguments: Record<string, unknown> }[];
  /** Defaults: input from the request size, output from the answer size. */
  usage?: { input_tokens?: number; output_tokens?: number };
  /** Answer as cut off by the token limit (`length` / `max_tokens`). */
  finish?: "max_tokens";
  /** Wait before sending the response headers. */
  delay_ms?: number;
  /** Wait between streamed events (the first goes out at once). */
  chunk_delay_ms?: number;
}

export interface RecordedRequest {
  api: "openai" | "anthropic";
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `${url}/v1`: an OpenAI-compatible base URL. */
  openaiBaseUrl: string;
  /** `url`: Anthropic's base URL (the client appends /v1/messages). */
  anthropicBaseUrl: string;
  /** Env pointing the built-in `openai` and `anthropic` providers here, with TEST_API_KEY. */
  env: Record<string, string>;
  /** Replaces the remaining steps. */
  script(steps: ScriptStep[]): void;
  requests: RecordedRequest[];
  /** The next `times` calls fail with `status` (body: the API's error shape unless given). */
  failNext(
    status: number,
    times?: number,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface Failure {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export function startModelServer(
  options: {
    /** The answer when no scripted step is left (default: DEFAULT_REPLY). */
    next?(body: Record<string, unknown>): ScriptStep;
    /** Requests kept at most (the oldest go first); default: all. */
    keep?: number;
  } = {},
): Promise<ModelServer> {
  let steps: ScriptStep[] = [];
  const failures: Failure[] = [];
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  let seq = 0;

  const handle = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname;
    const api = req.method !== "POST"
      ? undefined
      : path === "/v1/chat/completions"
      ? "openai"
      : path === "/v1/messages"
      ? "anthropic"
      : undefined;
    if (!api) {
      return Response.json({ error: { message: "Not found" } }, {
        status: 404,
      });
    }
    let body: unknown;
    try {
      body = await req.json();
    } catch {
      return apiError(api, 400, "The request body is not valid JSON.");
    }
    if (!isRecord(body)) {
      return apiError(api, 400, "The request body must be a JSON object.");
    }
    requests.push({
      api,
      path,
      headers: Object.fromEntries(req.headers),
      body,
    });
    if (options.keep !== undefined && requests.length > options.keep) {
      requests.splice(0, requests.length - options.keep);
    }

    const failure = failures.shift();
    if (failure) {
      return failure.body === undefined
        ? apiError(
          api,
          failure.status,
          `Scripted failure (HTTP ${failure.status})`,
          failure.headers,
        )
        : Response.json(failure.body, {
          status: failure.status,
          headers: failure.headers,
        });
    }
    const problem = api === "openai"
      ? openaiProblem(body)
      : anthropicProblem(req.headers, body);
    if (problem) return apiError(api, problem.status ?? 400, problem.message);

    const step = steps.shift() ?? options.next?.(body) ??
      { text: DEFAULT_REPLY };
    const signal = AbortSignal.any([req.signal, closing.signal]);
    if (!(await pause(step.delay_ms ?? 0, signal))) {
      return new Response(null, { status: 499 });
    }
    const answer = {
      step,
      model: String(body.model),
      id: ++seq,
      usage: usageOf(step, body),
    };
    if (body.stream === true) {
      const events = api === "openai"
        ? openaiEvents(
          answer,
          isRecord(body.stream_options) &&
            body.stream_options.include_usage === true,
        )
        : anthropicEvents(answer);
      return sse(events, step.chunk_delay_ms ?? 0, signal);
    }
    return Response.json(
      api === "openai" ? openaiJson(answer) : anthropicJson(answer),
    );
  };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {}, signal: closing.signal },
    handle,
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  const close = async () => {
    closing.abort();
    await server.finished;
  };
  return Promise.resolve({
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    env: {
      OPENAI_BASE_URL: `${url}/v1`,
      OPENAI_API_KEY: TEST_API_KEY,
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: TEST_API_KEY,
    },
    script(next) {
      steps = [...next];
    },
    requests,
    failNext(status, times = 1, options = {}) {
      for (let i = 0; i < times; i++) failures.push({ status, ...options });
    },
    close,
    [Symbol.asyncDispose]: close,
  });
}

function usageOf(
  step: ScriptStep,
  body: Record<string, unknown>,
): Answer["usage"] {
  const out = (step.text ?? "").length +
    JSON.stringify(step.tool_calls ?? []).length;
  return {
    input_tokens: step.usage?.input_tokens ??
      Math.ceil(JSON.stringify(body.messages).length / 4),
    output_tokens: step.usage?.output_tokens ?? Math.max(1, Math.ceil(out / 4)),
  };
}

function sse(events: string[], gapMs: number, signal: AbortSignal): Response {
  const encoder = new TextEncoder();
  const cancelled = new AbortController();
  const stop = AbortSignal.any([signal, cancelled.signal]);
  let next = 0;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (next > 0 && !(await pause(gapMs, stop))) {
        if (!cancelled.signal.aborted) controller.close();
        return;
      }
      if (next >= events.length) return controller.close();
      controller.enqueue(encoder.encode(events[next++]));
    },
    cancel() {
      cancelled.abort();
    },
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
    },
  });
}

/** Resolves true after `ms`, or false at once when `signal` aborts (no timer outlives a test). */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", onAbort);
  });
}
