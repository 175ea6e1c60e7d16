// Answers in the OpenAI Chat Completions and Anthropic Messages wire formats,
// JSON and SSE, shaped like the real APIs' (ids, envelopes, delta splitting).
// Used by tests/agents/model_server.ts.
import type { ScriptStep } from "../model_server.ts";

export interface Answer {
  step: ScriptStep;
  model: string;
  id: number;
  usage: { input_tokens: number; output_tokens: number };
}

// ---- OpenAI Chat Completions ----

function openaiFinish(step: ScriptStep): string {
  if (step.finish === "max_tokens") return "length";
  return step.tool_calls?.length ? "tool_calls" : "stop";
}

function openaiUsage(a: Answer) {
  const { input_tokens: p, output_tokens: c } = a.usage;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
}

export function openaiJson(a: Answer) {
  const calls = a.step.tool_calls ?? [];
  return {
    id: `chatcmpl-${a.id}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: a.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: a.step.text ?? (calls.length ? null : ""),
        refusal: null,
        ...(calls.length
          ? {
            tool_calls: calls.map((c, i) => ({
              id: `call_${a.id}_${i}`,
              type: "function",
              function: {
                name: c.name,
                arguments: JSON.stringify(c.arguments),
              },
            })),
          }
          : {}),
      },
      logprobs: null,
      finish_reason: openaiFinish(a.step),
    }],
    usage: openaiUsage(a),
    system_fingerprint: "fp_model_server",
  };
}

export function openaiEvents(a: Answer, includeUsage: boolean): string[] {
  const base = {
    id: `chatcmpl-${a.id}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: a.model,
    system_fingerprint: "fp_model_server",
  };
  const chunk = (
    delta: Record<string, unknown>,
    finish: string | null = null,
  ) =>
    `data: ${
      JSON.stringify({
        ...base,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...(includeUsage ? { usage: null } : {}),
      })
    }\n\n`;
  const events = [chunk({ role: "assistant", content: "", refusal: null })];
  for (const piece of textPieces(a.step.text ?? "")) {
    events.push(chunk({ content: piece }));
  }
  (a.step.tool_calls ?? []).forEach((call, index) => {
    events.push(chunk({
      tool_calls: [{
        index,
        id: `call_${a.id}_${index}`,
        type: "function",
        function: { name: call.name, arguments: "" },
      }],
    }));
    for (const part of slices(JSON.stringify(call.arguments), 7)) {
      events.push(
        chunk({ tool_calls: [{ index, function: { arguments: part } }] }),
      );
    }
  });
  events.push(chunk({}, openaiFinish(a.step)));
  if (includeUsage) {
    events.push(
      `data: ${
        JSON.stringify({ ...base, choices: [], usage: openaiUsage(a) })
      }\n\n`,
    );
  }
  events.push("data: [DONE]\n\n");
  return events;
}

// ---- Anthropic Messages ----

function anthropicStop(step: ScriptStep): string {
  if (step.finish === "max_tokens") return "max_tokens";
  return step.tool_calls?.length ? "tool_use" : "end_turn";
}

export function anthropicJson(a: Answer) {
  const content: Record<string, unknown>[] = [];
  if (a.step.text) content.push({ type: "text", text: a.step.text });
  (a.step.tool_calls ?? []).forEach((c, i) =>
    content.push({
      type: "tool_use",
      id: `toolu_${a.id}_${i}`,
      name: c.name,
      input: c.arguments,
    })
  );
  return {
    id: `msg_${a.id}`,
    type: "message",
    role: "assistant",
    model: a.model,
    content,
    stop_reason: anthropicStop(a.step),
    stop_sequence: null,
    usage: a.usage,
  };
}

export function anthropicEvents(a: Answer): string[] {
  const ev = (data: Record<string, unknown>) =>
    `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  const events = [
    ev({
      type: "message_start",
      message: {
        id: `msg_${a.id}`,
        type: "message",
        role: "assistant",
        model: a.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: a.usage.input_tokens, output_tokens: 1 },
      },
    }),
    ev({ type: "ping" }),
  ];
  let index = 0;
  // One content block: its start, its deltas, its stop.
  const block = (
    content_block: Record<string, unknown>,
    deltas: Record<string, unknown>[],
  ) => {
    events.push(ev({ type: "content_block_start", index, content_block }));
    for (const delta of deltas) {
      events.push(ev({ type: "content_block_delta", index, delta }));
    }
    events.push(ev({ type: "content_block_stop", index }));
    index++;
  };
  if (a.step.text) {
    block(
      { type: "text", text: "" },
      textPieces(a.step.text).map((text) => ({ type: "text_delta", text })),
    );
  }
  (a.step.tool_calls ?? []).forEach((call, i) => {
    block(
      {
        type: "tool_use",
        id: `toolu_${a.id}_${i}`,
        name: call.name,
        input: {},
      },
      ["", ...slices(JSON.stringify(call.arguments), 7)].map((
        partial_json,
      ) => ({ type: "input_json_delta", partial_json })),
    );
  });
  events.push(ev({
    type: "message_delta",
    delta: { stop_reason: anthropicStop(a.step), stop_sequence: null },
    usage: { output_tokens: a.usage.output_tokens },
  }));
  events.push(ev({ type: "message_stop" }));
  return events;
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  529: "overloaded_error",
};

export function apiError(
  api: "openai" | "anthropic",
  status: number,
  message: string,
  headers?: Record<string, string>,
): Response {
  const type = ERROR_TYPES[status] ??
    (status >= 500 ? "api_error" : "invalid_request_error");
  const body = api === "openai"
    ? {
      error: {
        message,
        type: status >= 500 ? "server_error" : type,
        param: null,
        code: null,
      },
    }
    : { type: "error", error: { type, message } };
  return Response.json(body, { status, headers });
}

/** Word by word (a one-word text in two halves), like a tokenizer's deltas. */
function textPieces(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  if (words.length > 1) return words;
  const half = Math.ceil(text.length / 2);
  return text.length > 1 ? [text.slice(0, half), text.slice(half)] : words;
}

function slices(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
