// The wire format of the Anthropic Messages API (`POST /v1/messages`):
// system prompt as a top-level field, tool results as `tool_result` blocks
// in a user turn, strictly alternating user/assistant turns.
import { z } from "zod";
import type { ModelMessage, ModelRequest, ModelResponse } from "../model.ts";
import type { ProviderModelOptions, WireFormat } from "./endpoint_model.ts";
import type { Endpoint } from "./http.ts";
import { modelResponse, type WireAnswer } from "./answer.ts";
import type { PartialToolCall } from "./tool_calls.ts";
import type { SseEvent } from "../../platform/sse.ts";

export const ANTHROPIC_VERSION = "2023-06-01";
/** Anthropic requires max_tokens; every current Claude model allows this many. */
export const DEFAULT_MAX_TOKENS = 4096;

/** The Messages API, for endpointModel. */
export const anthropicMessages: WireFormat<ProviderModelOptions> = {
  path: "/v1/messages",
  body: requestBody,
  parse: parseMessage,
  readStream,
};

function parseMessage(endpoint: Endpoint, json: unknown): ModelResponse {
  const parsed = WireMessage.safeParse(json);
  if (!parsed.success) throw endpoint.unexpected(json);
  const calls: PartialToolCall[] = [];
  let content = "";
  for (const block of parsed.data.content) {
    if (block.type === "text") content += block.text ?? "";
    if (block.type === "tool_use") {
      calls.push({
        id: block.id ?? `toolu_${calls.length}`,
        name: block.name ?? "",
        arguments: block.input ?? {},
      });
    }
  }
  return finish(endpoint, {
    content,
    calls,
    stop: parsed.data.stop_reason,
    usage: parsed.data.usage,
  });
}

type Block = Record<string, unknown>;

function requestBody(
  request: Omit<ModelRequest, "model">,
  { model }: ProviderModelOptions,
  stream: boolean,
): Record<string, unknown> {
  const system = request.messages.flatMap((m) =>
    m.role === "system" ? [m.content] : []
  );
  const body: Record<string, unknown> = {
    model,
    max_tokens: request.max_tokens ?? DEFAULT_MAX_TOKENS,
    messages: wireMessages(request.messages),
  };
  if (system.length > 0) body.system = system.join("\n\n");
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: { type: "object", ...t.parameters },
    }));
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (stream) body.stream = true;
  return body;
}

/** Folds the port's messages into alternating turns of content blocks. */
function wireMessages(
  messages: ModelMessage[],
): { role: "user" | "assistant"; content: string | Block[] }[] {
  const turns: { role: "user" | "assistant"; content: Block[] }[] = [];
  const add = (role: "user" | "assistant", blocks: Block[]) => {
    if (blocks.length === 0) return; // empty turns are rejected
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  const text = (t: string): Block[] => t ? [{ type: "text", text: t }] : [];
  for (const m of messages) {
    if (m.role === "user") add("user", text(m.content));
    if (m.role === "assistant") {
      add("assistant", [
        ...text(m.content),
        ...(m.tool_calls ?? []).map((c) => ({
          type: "tool_use",
          id: c.id,
          name: c.name,
          input: c.arguments,
        })),
      ]);
    }
    if (m.role === "tool") {
      add("user", [{
        type: "tool_result",
        tool_use_id: m.tool_call_id,
        ...(m.content ? { content: m.content } : {}),
      }]);
    }
  }
  return turns.map(({ role, content }) => {
    // tool_result blocks must open their user turn.
    const ordered = [
      ...content.filter((b) => b.type === "tool_result"),
      ...content.filter((b) => b.type !== "tool_result"),
    ];
    const only = ordered.length === 1 ? ordered[0] : undefined;
    return {
      role,
      content: only?.type === "text" && typeof only.text === "string"
        ? only.text
        : ordered,
    };
  });
}

const WireUsage = z.object({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
});
type WireUsage = z.output<typeof WireUsage>;

const WireBlock = z.object({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.record(z.string(), z.unknown()).optional(),
});

const WireMessage = z.object({
  content: z.array(WireBlock),
  stop_reason: z.string().nullish(),
  usage: WireUsage.nullish(),
});

const StreamEvent = z.object({
  type: z.string(),
  index: z.number().int().min(0).optional(),
  message: z.object({ usage: WireUsage.nullish() }).optional(),
  content_block: WireBlock.optional(),
  delta: z.object({
    type: z.string().optional(),
    text: z.string().optional(),
    partial_json: z.string().optional(),
    stop_reason: z.string().nullish(),
  }).optional(),
  usage: WireUsage.nullish(),
  error: z.object({ message: z.string() }).optional(),
});

async function readStream(
  endpoint: Endpoint,
  events: AsyncIterable<SseEvent>,
  onText: (delta: string) => void,
): Promise<ModelResponse> {
  let content = "";
  // Streamed tool_use blocks start with `input: {}`; the input then arrives as JSON fragments.
  const calls = new Map<number, PartialToolCall & { streamed: boolean }>();
  let stop: string | null | undefined;
  const usage: WireUsage = {};
  let complete = false;
  for await (const sse of events) {
    let json: unknown;
    try {
      json = JSON.parse(sse.data);
    } catch {
      throw endpoint.unexpected(sse.data);
    }
    const parsed = StreamEvent.safeParse(json);
    if (!parsed.success) throw endpoint.unexpected(sse.data);
    const event = parsed.data;
    const block = event.content_block;
    const index = event.index ?? 0;
    switch (event.type) {
      case "message_start":
        Object.assign(usage, event.message?.usage ?? {});
        break;
      case "content_block_start":
        if (block?.type === "text" && block.text) {
          content += block.text;
          onText(block.text);
        }
        if (block?.type === "tool_use") {
          calls.set(index, {
            id: block.id ?? `toolu_${index}`,
            name: block.name ?? "",
            arguments: block.input ?? {},
            streamed: false,
          });
        }
        break;
      case "content_block_delta": {
        const delta = event.delta;
        if (delta?.type === "text_delta" && delta.text) {
          content += delta.text;
          onText(delta.text);
        }
        const call = calls.get(index);
        if (delta?.type === "input_json_delta" && call) {
          const before = call.streamed && typeof call.arguments === "string"
            ? call.arguments
            : "";
          call.arguments = before + (delta.partial_json ?? "");
          call.streamed = true;
        }
        break;
      }
      case "message_delta":
        if (event.delta?.stop_reason) stop = event.delta.stop_reason;
        // message_delta's counts are cumulative; some gateways send input here too.
        for (const [key, value] of Object.entries(event.usage ?? {})) {
          if (typeof value === "number") Object.assign(usage, { [key]: value });
        }
        break;
      case "message_stop":
        complete = true;
        break;
      case "error":
        throw endpoint.badAnswer(
          `an error mid-stream: ${event.error?.message ?? sse.data}`,
        );
    }
    if (complete) break;
  }
  if (!complete) throw endpoint.incompleteStream();
  const ordered = [...calls.entries()].sort(([a], [b]) => a - b);
  return finish(endpoint, {
    content,
    calls: ordered.map(([, c]) => ({
      id: c.id,
      name: c.name,
      arguments: c.arguments,
    })),
    stop,
    usage,
  });
}

function finish(
  endpoint: Endpoint,
  answer: WireAnswer<WireUsage>,
): ModelResponse {
  const u = answer.usage;
  return modelResponse(endpoint.provider, {
    content: answer.content,
    calls: answer.calls,
    truncated: answer.stop === "max_tokens",
    endTurn: answer.stop === "end_turn" || answer.stop === "stop_sequence",
    usage: {
      // Cached prompt tokens are still input the model read.
      input_tokens: (u?.input_tokens ?? 0) +
        (u?.cache_creation_input_tokens ?? 0) +
        (u?.cache_read_input_tokens ?? 0),
      output_tokens: u?.output_tokens ?? 0,
    },
  });
}
