// The wire format of OpenAI-compatible Chat Completions (`POST
// /chat/completions`): OpenAI, OpenRouter, Ollama, vLLM, llama.cpp.
import { z } from "zod";
import type { ModelMessage, ModelRequest, ModelResponse } from "../model.ts";
import type { ProviderModelOptions, WireFormat } from "./endpoint_model.ts";
import type { Endpoint } from "./http.ts";
import { modelResponse, type WireAnswer } from "./answer.ts";
import type { PartialToolCall } from "./tool_calls.ts";

export interface OpenAIModelOptions extends ProviderModelOptions {
  /**
   * api.openai.com wants `max_completion_tokens` (its reasoning models reject
   * `max_tokens`); compatible servers mostly know only `max_tokens`.
   */
  maxTokensField: "max_tokens" | "max_completion_tokens";
}

/** Chat Completions, for endpointModel. */
export const openAIChat: WireFormat<OpenAIModelOptions> = {
  path: "/chat/completions",
  body: requestBody,
  parse: parseCompletion,
  readStream,
};

function requestBody(
  request: Omit<ModelRequest, "model">,
  options: OpenAIModelOptions,
  stream: boolean,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: options.model,
    messages: request.messages.map(wireMessage),
  };
  // An empty `tools` array is rejected by OpenAI ("[] is too short").
  if (request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        description: t.description,
        parameters: t.parameters,
      },
    }));
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.max_tokens !== undefined) {
    body[options.maxTokensField] = request.max_tokens;
  }
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function wireMessage(message: ModelMessage): Record<string, unknown> {
  switch (message.role) {
    case "system":
    case "user":
      return { role: message.role, content: message.content };
    case "assistant":
      if (!message.tool_calls?.length) {
        return { role: "assistant", content: message.content };
      }
      return {
        role: "assistant",
        content: message.content === "" ? null : message.content,
        tool_calls: message.tool_calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.arguments) },
        })),
      };
    case "tool":
      return {
        role: "tool",
        tool_call_id: message.tool_call_id,
        content: message.content,
      };
  }
}

const WireUsage = z.object({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
});

const WireError = z.object({ message: z.string() });

const Completion = z.object({
  choices: z.array(z.object({
    message: z.object({
      content: z.string().nullish(),
      tool_calls: z.array(z.object({
        id: z.string().nullish(),
        function: z.object({
          name: z.string(),
          // Some compatible servers send an object rather than JSON text.
          arguments: z.union([z.string(), z.record(z.string(), z.unknown())])
            .nullish(),
        }),
      })).nullish(),
    }),
    finish_reason: z.string().nullish(),
  })).min(1),
  usage: WireUsage.nullish(),
});

function parseCompletion(endpoint: Endpoint, json: unknown): ModelResponse {
  const parsed = Completion.safeParse(json);
  if (!parsed.success) throw endpoint.unexpected(json);
  const choice = parsed.data.choices[0];
  const calls = (choice.message.tool_calls ?? []).map((c, i) => ({
    id: c.id || `call_${i}`,
    name: c.function.name,
    arguments: c.function.arguments ?? "",
  }));
  return finish(endpoint, {
    content: choice.message.content ?? "",
    calls,
    stop: choice.finish_reason,
    usage: parsed.data.usage,
  });
}

const Chunk = z.object({
  choices: z.array(z.object({
    delta: z.object({
      content: z.string().nullish(),
      tool_calls: z.array(z.object({
        index: z.number().int().min(0).nullish(),
        id: z.string().nullish(),
        function: z.object({
          name: z.string().nullish(),
          arguments: z.string().nullish(),
        }).nullish(),
      })).nullish(),
    }).nullish(),
    finish_reason: z.string().nullish(),
  })).nullish(),
  usage: WireUsage.nullish(),
  error: WireError.nullish(),
});

async function readStream(
  endpoint: Endpoint,
  events: AsyncIterable<{ data: string }>,
  onText: (delta: string) => void,
): Promise<ModelResponse> {
  let content = "";
  const calls: PartialToolCall[] = [];
  let reason: string | null | undefined;
  let usage: z.output<typeof WireUsage> | null | undefined;
  let done = false;
  for await (const event of events) {
    if (event.data === "[DONE]") {
      done = true;
      break;
    }
    const chunk = Chunk.safeParse(parseJson(endpoint, event.data));
    if (!chunk.success) throw endpoint.unexpected(event.data);
    if (chunk.data.error) {
      throw endpoint.badAnswer(
        `an error mid-stream: ${chunk.data.error.message}`,
      );
    }
    if (chunk.data.usage) usage = chunk.data.usage;
    const choice = chunk.data.choices?.[0];
    if (!choice) continue;
    if (choice.finish_reason) reason = choice.finish_reason;
    const delta = choice.delta;
    if (delta?.content) {
      content += delta.content;
      onText(delta.content);
    }
    for (const fragment of delta?.tool_calls ?? []) {
      // Without an index (some servers), an id starts a new call.
      const index = fragment.index ??
        (fragment.id ? calls.length : Math.max(0, calls.length - 1));
      const entry = calls[index] ??
        (calls[index] = { id: `call_${index}`, name: "", arguments: "" });
      if (fragment.id) entry.id = fragment.id;
      if (fragment.function?.name) entry.name += fragment.function.name;
      if (fragment.function?.arguments) {
        entry.arguments += fragment.function.arguments;
      }
    }
  }
  if (!done && !reason) throw endpoint.incompleteStream();
  return finish(endpoint, {
    content,
    calls: calls.filter((c) => c !== undefined),
    stop: reason,
    usage,
  });
}

function finish(
  endpoint: Endpoint,
  answer: WireAnswer<z.output<typeof WireUsage>>,
): ModelResponse {
  return modelResponse(endpoint.provider, {
    content: answer.content,
    calls: answer.calls,
    truncated: answer.stop === "length",
    // Some compatible servers say "stop" even when they return tool calls.
    endTurn: answer.stop === "stop",
    usage: {
      input_tokens: answer.usage?.prompt_tokens ?? 0,
      output_tokens: answer.usage?.completion_tokens ?? 0,
    },
  });
}

function parseJson(endpoint: Endpoint, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw endpoint.badAnswer(`a stream event that is not JSON: ${text}`);
  }
}
