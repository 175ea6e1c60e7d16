// Shared by the provider tests: a resolver pointed at a model server, with
// its log lines captured.
import assert from "node:assert/strict";
import type { z } from "zod";
import { createLogger, type Logger } from "../../../platform/log.ts";
import {
  createModelResolver,
  ProvidersConfig,
} from "../../../agents/providers/mod.ts";
import {
  type ModelMessage,
  type ModelRequest,
  type ModelResolver,
  type ModelTool,
  ProviderError,
} from "../../../agents/model.ts";
import type { ModelServer, RecordedRequest } from "../model_server.ts";

export interface Harness {
  models: ModelResolver;
  log: Logger;
  /** Every log line written, as JSON text. */
  lines: string[];
}

export function harness(
  server: ModelServer | undefined,
  options: {
    /** Parsed with the ProvidersConfig schema, as the daemon's config would be. */
    config?: z.input<typeof ProvidersConfig>;
    env?: Record<string, string>;
    fetchFn?: typeof fetch;
    defaultProvider?: string;
  } = {},
): Harness {
  const lines: string[] = [];
  const log = createLogger({ level: "debug", sink: (l) => lines.push(l) });
  const models = createModelResolver({
    config: ProvidersConfig.parse(options.config ?? {}),
    env: { ...server?.env, ...options.env },
    log,
    fetchFn: options.fetchFn,
    defaultProvider: options.defaultProvider,
  });
  return { models, log, lines };
}

export const HELLO: Omit<ModelRequest, "model"> = {
  messages: [{ role: "user", content: "Hello?" }],
  tools: [],
};

/** Awaits a rejection that must be a ProviderError, and returns it. */
export async function providerError(
  promise: Promise<unknown>,
): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ProviderError, `not a ProviderError: ${error}`);
    return error;
  }
  assert.fail("expected a ProviderError");
}

/** Collects streamed deltas. */
export function collector(): { deltas: string[]; onText: (d: string) => void } {
  const deltas: string[] = [];
  return { deltas, onText: (d) => deltas.push(d) };
}

/**
 * A scripted text answer, as JSON, to `messages` through `ref`: it comes back
 * as just that text. Returns the request the provider sent.
 */
export async function assertPlainAnswer(
  server: ModelServer,
  ref: string,
  messages: ModelMessage[],
  text: string,
  usage: { input_tokens: number; output_tokens: number },
): Promise<RecordedRequest> {
  server.script([{ text, usage }]);
  const model = harness(server).models.resolve(ref);
  assert.equal(model.id, ref);

  const answer = await model.complete({ messages, tools: [] });
  assert.deepEqual(answer, {
    content: text,
    tool_calls: [],
    finish: "end_turn",
    usage,
  });
  const [request] = server.requests;
  return request;
}

/** A scripted text answer, streamed: it must arrive as several deltas, in order. */
export async function assertStreamsText(
  server: ModelServer,
  ref: string,
  text: string,
  usage: { input_tokens: number; output_tokens: number },
): Promise<void> {
  server.script([{ text, usage }]);
  const model = harness(server).models.resolve(ref);
  const { deltas, onText } = collector();

  const answer = await model.complete(HELLO, { onText });
  assert.ok(deltas.length > 3, `only ${deltas.length} deltas`);
  assert.equal(deltas.join(""), text);
  assert.equal(answer.content, text);
  assert.equal(answer.finish, "end_turn");
  assert.deepEqual(answer.usage, usage);
  assert.equal(server.requests[0].body.stream, true);
}

/**
 * Two scripted answers through `ref`, streamed or JSON: one call of `tool`
 * with `nested` arguments after `text`, then two parallel calls (`tool` with
 * `parallel`, and clock__now).
 */
export async function assertToolCalls(
  server: ModelServer,
  ref: string,
  stream: boolean,
  calls: {
    tool: ModelTool;
    text: string;
    nested: Record<string, unknown>;
    parallel: Record<string, unknown>;
    /** What the wire format's call ids look like. */
    idPattern: RegExp;
    /** When given, the parallel answer's content must be this. */
    parallelContent?: string;
  },
): Promise<void> {
  const { tool, text, nested } = calls;
  server.script([
    { text, tool_calls: [{ name: tool.name, arguments: nested }] },
    {
      tool_calls: [
        { name: tool.name, arguments: calls.parallel },
        { name: "clock__now", arguments: {} },
      ],
    },
  ]);
  const model = harness(server).models.resolve(ref);
  const { deltas, onText } = collector();
  const options = stream ? { onText } : {};
  const request = { ...HELLO, tools: [tool] };

  const single = await model.complete(request, options);
  assert.equal(single.finish, "tool_calls");
  assert.equal(single.content, text);
  assert.equal(single.tool_calls.length, 1);
  assert.equal(single.tool_calls[0].name, tool.name);
  assert.deepEqual(single.tool_calls[0].arguments, nested);
  assert.match(single.tool_calls[0].id, calls.idPattern);

  const parallel = await model.complete(request, options);
  assert.equal(parallel.finish, "tool_calls");
  if (calls.parallelContent !== undefined) {
    assert.equal(parallel.content, calls.parallelContent);
  }
  assert.deepEqual(
    parallel.tool_calls.map((c) => [c.name, c.arguments]),
    [[tool.name, calls.parallel], ["clock__now", {}]],
  );
  assert.notEqual(parallel.tool_calls[0].id, parallel.tool_calls[1].id);
  assert.equal(deltas.join(""), stream ? text : "");
}
