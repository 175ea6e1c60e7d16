// One agent turn: system prompt + the conversation so far + the message →
// model → tool calls through the gateway (and local tools) → model … until
// the model answers or a bound stops it. One step = one model call plus the
// tool calls it asks for. A tool failure is told to the model, never fatal;
// a provider failure rejects the turn (ProviderError) and stores nothing.

import { messageOf } from "../platform/errors.ts";
import { Unavailable } from "./errors.ts";
import type { Logger } from "../platform/log.ts";
import type { AgentsConfig } from "./config.ts";
import { Conversations } from "./conversations.ts";
import type { ToolGateway, ToolOutcome } from "./gateway_link.ts";
import type { LocalTool } from "./local_tool.ts";
import type { Model, ModelMessage, ModelTool, ToolCall } from "./model.ts";
import type { Agent, StopReason, ToolCallRecord } from "./schemas.ts";

export type TurnEvent =
  | { type: "text"; step: number; delta: string }
  | {
    type: "tool_call_start";
    step: number;
    id: string;
    name: string;
    arguments: Record<string, unknown>;
  }
  | {
    /** The call waits, e.g. for a person to approve it (the policy's `ask`). */
    type: "tool_call_waiting";
    step: number;
    id: string;
    name: string;
    message: string;
  }
  | {
    type: "tool_call_end";
    step: number;
    id: string;
    name: string;
    is_error: boolean;
    result: string;
  };

export interface TurnDeps {
  gateway: ToolGateway;
  conversations: Conversations;
  config: AgentsConfig;
  log: Logger;
}

export interface TurnRequest {
  agent: Agent;
  model: Model;
  message: string;
  session: string;
  maxTokens?: number;
  /** Local tools offered besides the agent's gateway tools. */
  localTools: readonly LocalTool[];
  /** Gateway names among the agent's resolved tools. */
  gatewayTools: readonly string[];
  /** Kept with the user message in the conversation (e.g. the sender). */
  userExtra?: { [key: string]: string };
  signal?: AbortSignal;
  onEvent?: (event: TurnEvent) => void;
  /** Whether `onEvent` hears the answer's text too (the model's answer streamed); default true. */
  textEvents?: boolean;
}

/** Characters of an error a reply's warning repeats. */
const MAX_WARNING_REASON = 300;

export interface TurnResult {
  content: string;
  tool_calls: ToolCallRecord[];
  usage: { input_tokens: number; output_tokens: number };
  stop_reason: StopReason;
  steps: number;
  /** What went wrong beside the answer (the conversation not stored); absent when nothing did. */
  warnings?: string[];
}

export async function runTurn(
  deps: TurnDeps,
  request: TurnRequest,
): Promise<TurnResult> {
  // Not AbortSignal.timeout: its timer cannot be cleared, and until it fires it
  // keeps the turn's signals and their listeners (one per MCP call) in memory.
  const timeout = new AbortController();
  const timer = setTimeout(
    () =>
      timeout.abort(new DOMException("The turn timed out.", "TimeoutError")),
    deps.config.turn_timeout_ms,
  );
  try {
    return await turn(deps, request, timeout.signal);
  } finally {
    clearTimeout(timer);
  }
}

async function turn(
  deps: TurnDeps,
  request: TurnRequest,
  timeout: AbortSignal,
): Promise<TurnResult> {
  const { agent } = request;
  const { config } = deps;
  const deadline = Date.now() + config.turn_timeout_ms;
  const signal = request.signal
    ? AbortSignal.any([request.signal, timeout])
    : timeout;
  const timedOut = () => timeout.aborted && !request.signal?.aborted;

  // One listing per turn serves the model's tools and where the conversation
  // is kept. Where the last turn found it kept by the memory server, the
  // history is read meanwhile (and read again should the listing disagree).
  const load = (viaMemory: boolean) =>
    deps.conversations.load(
      agent.name,
      request.session,
      config.history_limit,
      viaMemory,
    );
  const early = deps.conversations.lastKeptByMemory ? load(true) : undefined;
  // Unused if the listing fails or disagrees: its failure is not this turn's.
  early?.catch(() => {});
  const listed = await listGateway(deps, request);
  const tools = toolsFor(deps, request, listed);
  const viaMemory = Conversations.keptByMemory(listed);
  deps.conversations.lastKeptByMemory = viaMemory;
  const local = new Map(request.localTools.map((t) => [t.tool.name, t]));
  const history = await (viaMemory && early ? early : load(viaMemory))
    .catch((error) => {
      throw new Unavailable(
        `Cannot load the conversation of agent "${agent.name}": ${
          messageOf(error)
        }`,
      );
    });
  const messages: ModelMessage[] = [];
  if (agent.system_prompt !== "") {
    messages.push({ role: "system", content: agent.system_prompt });
  }
  messages.push(...history, { role: "user", content: request.message });

  const emit = request.onEvent ?? (() => {});
  const records: ToolCallRecord[] = [];
  const usage = { input_tokens: 0, output_tokens: 0 };
  let content = "";
  let stop: StopReason | undefined;
  let previousCall: string | undefined;
  let step = 0;
  while (stop === undefined) {
    step++;
    const current = step;
    let response;
    try {
      response = await request.model.complete({
        messages,
        tools,
        temperature: agent.temperature,
        max_tokens: request.maxTokens ?? agent.max_tokens,
      }, {
        signal,
        onText: request.onEvent && request.textEvents !== false
          ? (delta) => emit({ type: "text", step: current, delta })
          : undefined,
      });
    } catch (error) {
      if (timedOut()) {
        stop = "timeout";
        break;
      }
      throw error;
    }
    usage.input_tokens += response.usage.input_tokens;
    usage.output_tokens += response.usage.output_tokens;
    content = response.content;
    if (response.tool_calls.length === 0) {
      stop = response.finish === "max_tokens" ? "max_tokens" : "end_turn";
      break;
    }
    messages.push({
      role: "assistant",
      content,
      tool_calls: response.tool_calls,
    });
    for (const call of response.tool_calls) {
      const key = `${call.name} ${stableJson(call.arguments)}`;
      if (key === previousCall) {
        stop = "repeated_tool_call";
        break;
      }
      previousCall = key;
      emit({
        type: "tool_call_start",
        step: current,
        id: call.id,
        name: call.name,
        arguments: call.arguments,
      });
      const outcome = await execute(deps, request, local, call, {
        signal,
        timeoutMs: Math.max(1, deadline - Date.now()),
        onProgress: (message) =>
          emit({
            type: "tool_call_waiting",
            step: current,
            id: call.id,
            name: call.name,
            message,
          }),
      });
      const result = cut(outcome.text, config.tool_result_max_chars);
      records.push({
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        result,
        is_error: outcome.isError,
      });
      emit({
        type: "tool_call_end",
        step: current,
        id: call.id,
        name: call.name,
        is_error: outcome.isError,
        result,
      });
      messages.push({
        role: "tool",
        tool_call_id: call.id,
        name: call.name,
        content: outcome.isError ? `Error: ${result}` : result,
      });
      if (timedOut()) {
        stop = "timeout";
        break;
      }
      if (request.signal?.aborted) throw request.signal.reason;
    }
    if (stop === undefined && step >= config.max_steps) stop = "max_steps";
  }

  let warnings: string[] | undefined;
  try {
    await deps.conversations.append(agent.name, request.session, [
      { role: "user", content: request.message, extra: request.userExtra },
      {
        role: "assistant",
        // Providers reject empty turns in a history (Anthropic does).
        content: content === "" ? `(no answer: ${stop})` : content,
        extra: {
          stop_reason: stop,
          tool_calls: records.map((record) => record.name),
        },
      },
    ], viaMemory);
  } catch (error) {
    const reason = messageOf(error);
    deps.log.warn("conversation_not_stored", {
      agent: agent.name,
      session: request.session,
      error: reason,
    });
    // The answer is still given (its tokens are spent), but the caller learns
    // that the next turn will not remember this one; the whole error is only
    // in the log (another memory server's error may echo what it was sent).
    warnings = [
      "This exchange was not stored in the conversation, so later turns will not see it: " +
      cut(reason, MAX_WARNING_REASON),
    ];
  }
  return {
    content,
    tool_calls: records,
    usage,
    stop_reason: stop,
    steps: step,
    ...warnings && { warnings },
  };
}

/**
 * The gateway's tools for the agent; undefined when the gateway does not run,
 * or cannot list while the agent has no gateway tools (its conversation is
 * then kept in the agents store).
 */
async function listGateway(
  deps: TurnDeps,
  request: TurnRequest,
): Promise<ModelTool[] | undefined> {
  const needed = request.gatewayTools.length > 0;
  if (!needed && !deps.gateway.running()) return undefined;
  try {
    return await deps.gateway.listTools(request.agent.name);
  } catch (error) {
    if (needed) {
      throw new Unavailable(
        `Agent "${request.agent.name}" has tools, but ${messageOf(error)}`,
      );
    }
    deps.log.warn("conversation_store_fallback", {
      agent: request.agent.name,
      error: messageOf(error),
    });
    return undefined;
  }
}

function toolsFor(
  deps: TurnDeps,
  request: TurnRequest,
  listed: readonly ModelTool[] | undefined,
): ModelTool[] {
  const tools: ModelTool[] = [];
  if (request.gatewayTools.length > 0 && listed !== undefined) {
    const wanted = new Set(request.gatewayTools);
    const found = listed.filter((tool) => wanted.has(tool.name));
    if (found.length < wanted.size) {
      const missing = [...wanted].filter((name) =>
        !found.some((tool) => tool.name === name)
      );
      deps.log.warn("agent_tools_missing", {
        agent: request.agent.name,
        missing,
      });
    }
    tools.push(...found);
  }
  tools.push(...request.localTools.map((tool) => tool.tool));
  return tools;
}

async function execute(
  deps: TurnDeps,
  request: TurnRequest,
  local: ReadonlyMap<string, LocalTool>,
  call: ToolCall,
  options: {
    signal: AbortSignal;
    timeoutMs: number;
    onProgress: (message: string) => void;
  },
): Promise<ToolOutcome> {
  const agent = request.agent.name;
  try {
    const localTool = local.get(call.name);
    if (localTool) {
      const text = await localTool.call(call.arguments, {
        agent,
        signal: options.signal,
      });
      return { text, isError: false };
    }
    if (!request.gatewayTools.includes(call.name)) {
      const offered = [...request.gatewayTools, ...local.keys()];
      return {
        text: `Unknown tool "${call.name}"; this agent's tools are: ${
          offered.join(", ") || "none"
        }`,
        isError: true,
      };
    }
    return await deps.gateway.callTool(
      agent,
      call.name,
      call.arguments,
      options,
    );
  } catch (error) {
    return { text: `${call.name} failed: ${messageOf(error)}`, isError: true };
  }
}

/** Cuts text to `max` characters, saying how much was left out. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… [${text.length - max} more characters cut]`;
}

/** JSON with sorted keys: the same arguments give the same text. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${
      keys.map((key) =>
        `${JSON.stringify(key)}:${stableJson(Reflect.get(value, key))}`
      ).join(",")
    }}`;
  }
  return JSON.stringify(value) ?? "null";
}
