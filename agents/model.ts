// The Model port: one chat turn with tool calling, streamed or not, against
// any provider (OpenAI-compatible chat completions, Anthropic Messages).
// Providers live in agents/providers/; the runtime sees only this file.

import { AgentError } from "./errors.ts";

/** A tool the model may call: the gateway name and its JSON Schema. */
export interface ModelTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
  /**
   * Which server and which of its tools this is, as the gateway's listing
   * says in `_meta` (a name may be shortened and cannot be split): what an
   * agent's `tools` entries resolve against. Never sent to a provider.
   */
  origin?: { server: string; tool: string };
}

export interface ToolCall {
  /** The provider's id for the call; answered by a `tool` message with the same id. */
  id: string;
  name: string;
  /** Parsed JSON arguments (an object). */
  arguments: Record<string, unknown>;
}

export type ModelMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; name: string; content: string };

export interface ModelRequest {
  /** The provider's model name (without the `<provider>/` prefix). */
  model: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  temperature?: number;
  max_tokens?: number;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export interface ModelResponse {
  content: string;
  tool_calls: ToolCall[];
  /** Normalised: `end_turn` (answered), `tool_calls`, `max_tokens`, `other`. */
  finish: "end_turn" | "tool_calls" | "max_tokens" | "other";
  usage: Usage;
}

export interface ModelCallOptions {
  signal?: AbortSignal;
  /** When given, the provider streams and reports text as it arrives. */
  onText?: (delta: string) => void;
}

/** One provider bound to one model name. */
export interface Model {
  /** `<provider>/<name>`, the provider made explicit. */
  readonly id: string;
  /** Rejects with ProviderError, or with the caller's `signal.reason` when aborted. */
  complete(
    request: Omit<ModelRequest, "model">,
    options?: ModelCallOptions,
  ): Promise<ModelResponse>;
}

/**
 * A provider failure a caller can show: unavailable when the provider is not
 * configured or unreachable, bad_gateway when it answered badly,
 * gateway_timeout when it went quiet. `provider` names it; the message never
 * contains a key.
 */
export class ProviderError extends AgentError {
  override name = "ProviderError";
  constructor(
    message: string,
    readonly provider: string,
    kind: "unavailable" | "bad_gateway" | "gateway_timeout",
  ) {
    super(kind, message, { provider });
  }
}

/** A model string that names no model: creating an agent with it is Invalid. */
export class ModelNameError extends Error {
  override name = "ModelNameError";
  constructor(
    message: string,
    /** How a bare name was tried, in order (empty for other mistakes). */
    readonly tried: string[] = [],
  ) {
    super(message);
  }
}

/**
 * Turns `<provider>/<name>` or a bare model name into a Model. A malformed
 * name or one no provider fits throws ModelNameError; a missing key only
 * fails when the model is called (ProviderError, unavailable), so an agent can be
 * created before its key is set.
 */
export interface ModelResolver {
  resolve(model: string): Model;
  /** Provider names known here: built-in and configured (for docs and errors). */
  providers(): string[];
}
