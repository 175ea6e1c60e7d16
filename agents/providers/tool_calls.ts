// Tool calls as providers send them, turned into the port's ToolCall:
// arguments arrive as JSON text (often in fragments) and must be an object.
import { ProviderError, type ToolCall } from "../model.ts";
import { clip } from "./http.ts";
import { isRecord } from "../../platform/validation.ts";

/** A tool call being assembled from streamed fragments. */
export interface PartialToolCall {
  id: string;
  name: string;
  /** JSON text, or an already parsed object (non-streamed answers of some servers). */
  arguments: string | Record<string, unknown>;
}

/**
 * Parses a call's arguments. Empty text is `{}` (tools without parameters);
 * anything else that is not a JSON object is a bad answer, not silently `{}`,
 * so the tool never runs with arguments the model did not mean.
 */
export function finishToolCall(
  provider: string,
  call: PartialToolCall,
): ToolCall {
  const raw = call.arguments;
  if (typeof raw !== "string") {
    return { id: call.id, name: call.name, arguments: raw };
  }
  if (raw.trim() === "") return { id: call.id, name: call.name, arguments: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalid(provider, call.name, raw);
  }
  if (!isRecord(parsed)) throw invalid(provider, call.name, raw);
  return { id: call.id, name: call.name, arguments: parsed };
}

/** Finishes every call; when the answer was `truncated`, a broken call is dropped. */
export function finishToolCalls(
  provider: string,
  calls: PartialToolCall[],
  truncated: boolean,
): ToolCall[] {
  const toolCalls: ToolCall[] = [];
  for (const call of calls) {
    try {
      toolCalls.push(finishToolCall(provider, call));
    } catch (error) {
      // A call cut off by max_tokens is dropped; the caller sees `max_tokens`.
      if (!truncated) throw error;
    }
  }
  return toolCalls;
}

function invalid(provider: string, tool: string, raw: string): ProviderError {
  return new ProviderError(
    `Provider "${provider}" returned invalid arguments for tool "${tool}" (expected a JSON object): ${
      clip(raw, 200)
    }`,
    provider,
    "bad_gateway",
  );
}
