// A provider's finished answer, turned into the port's ModelResponse the same
// way for every provider; each says only what its stop reasons and usage mean.
import type { ModelResponse, Usage } from "../model.ts";
import { finishToolCalls, type PartialToolCall } from "./tool_calls.ts";

/** An answer as a provider sent it (whole or streamed), in its own words. */
export interface WireAnswer<U> {
  content: string;
  calls: PartialToolCall[];
  /** The provider's stop (finish) reason. */
  stop: string | null | undefined;
  usage: U | null | undefined;
}

/**
 * The ModelResponse of an answer: cut off (`truncated`, its broken tool calls
 * dropped), else tool calls, else a normal end (`endTurn`) or something other.
 */
export function modelResponse(
  provider: string,
  answer: {
    content: string;
    calls: PartialToolCall[];
    truncated: boolean;
    endTurn: boolean;
    usage: Usage;
  },
): ModelResponse {
  const toolCalls = finishToolCalls(provider, answer.calls, answer.truncated);
  return {
    content: answer.content,
    tool_calls: toolCalls,
    finish: answer.truncated
      ? "max_tokens"
      : toolCalls.length > 0
      ? "tool_calls"
      : answer.endTurn
      ? "end_turn"
      : "other",
    usage: answer.usage,
  };
}
