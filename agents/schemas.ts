// The /v1 resources as zod schemas: request payloads (strict: unknown fields
// are rejected), records and replies. The routes validate with them and the
// OpenAPI document is generated from them, so the two never disagree.

import { z } from "zod";
import { ID_PATTERN } from "./ids.ts";

/**
 * Agent and team names as people write them ("Research Agent", "Forschung",
 * "研究"): letters of any script, digits, single spaces and _ . ' -, 1-64
 * characters. No '/', ':' or '%', so a name never reads as a path or an address.
 */
export const NAME_PATTERN =
  /^[\p{L}\p{N}](?!.* {2})[\p{L}\p{M}\p{N} _.'-]{0,63}(?<! )$/u;
export const MAX_TOKENS_LIMIT = 131_072;
export const MAX_MESSAGE_CHARS = 256 * 1024;
export const MAX_TEAM_AGENTS = 20;
export const MAX_ITERATIONS_LIMIT = 100;

export const Name = z.string().regex(NAME_PATTERN, {
  error:
    "expected 1-64 characters: letters, digits, single spaces, apostrophes, '_', '.' or '-', starting with a letter or digit",
}).refine((name) => !ID_PATTERN.test(name), {
  error:
    "must not look like an id (agt_…, team_…): ids and names share the URLs",
});

/** The form two names are compared in: "Research Agent" and "research agent" are one name. */
export function nameKey(name: string): string {
  return name.normalize("NFC").toLowerCase();
}

const Timestamp = z.string().describe("ISO 8601 UTC timestamp");
const Temperature = z.number().min(0).max(2).describe(
  "Sampling temperature, 0 to 2",
);
const MaxTokens = z.number().int().min(1).max(MAX_TOKENS_LIMIT).describe(
  `Upper bound of generated tokens per model call, 1 to ${MAX_TOKENS_LIMIT}`,
);
export const SessionId = z.string().min(1).max(200)
  // deno-lint-ignore no-control-regex -- control characters are what it rejects
  .regex(/^[^\u0000-\u001F\u007F-\u009F]+$/, {
    error: "must not contain control characters",
  })
  .describe(
    "Conversation to continue; the agent's own conversation when absent",
  );

// ---- agents -----------------------------------------------------------------

export const AgentCreate = z.strictObject({
  name: Name.describe(
    "Agent name, unique regardless of case; also its memory namespace",
  ),
  model: z.string().min(1).max(200).regex(/^\S+$/, {
    error:
      "expected a model name (gpt-4o-mini) or <provider>/<model name> (openai/gpt-4o-mini), without spaces",
  }).optional().describe(
    "A model name (`gpt-4o`, `claude-sonnet-4-5`: placed by `agents.default_provider`, then by " +
      "its well-known prefix) or `<provider>/<model name>`; the configured `agents.default_model` when absent",
  ),
  system_prompt: z.string().max(MAX_MESSAGE_CHARS).default("").describe(
    "Instruction text for the agent",
  ),
  description: z.string().max(1000).optional().describe(
    "What the agent does, shown on its A2A card; the system prompt's first line when absent",
  ),
  temperature: Temperature.default(1),
  max_tokens: MaxTokens.default(4096),
  tools: z.array(z.string().min(1).max(200)).max(128).default([]).describe(
    "Tool entries: gateway names (`memory__store_memory`), a bare tool name when unique " +
      "(`store_memory`), or a server name for all its tools (`memory`)",
  ),
}).meta({ id: "AgentCreate" });
export type AgentCreate = z.output<typeof AgentCreate>;

export const Agent = z.object({
  id: z.string().describe("Agent identifier `agt_<ULID>`"),
  name: z.string(),
  model: z.string(),
  status: z.enum(["active"]).describe("Always `active` while the agent exists"),
  created_at: Timestamp,
  system_prompt: z.string(),
  description: z.string(),
  temperature: z.number(),
  max_tokens: z.number().int(),
  tools: z.array(z.string()).describe("The entries as created"),
  resolved_tools: z.array(z.string()).describe(
    "The tool names the entries resolved to at creation",
  ),
}).meta({ id: "Agent" });
export type Agent = z.output<typeof Agent>;

/**
 * What an agent token reads of an agent it may not act as: everything but
 * the system prompt (another agent's instructions are the operator's).
 */
export const AgentSummary = Agent.omit({ system_prompt: true }).meta({
  id: "AgentSummary",
});
export type AgentSummary = z.output<typeof AgentSummary>;

export const SendRequest = z.strictObject({
  message: z.string().min(1).max(MAX_MESSAGE_CHARS).describe(
    "Text sent to the agent",
  ),
  stream: z.boolean().default(false).describe(
    "`true` answers with text/event-stream events instead of one JSON reply",
  ),
  max_tokens: MaxTokens.optional().describe(
    "Overrides the agent's max_tokens for this message",
  ),
  session_id: SessionId.optional(),
}).meta({ id: "SendRequest" });
export type SendRequest = z.output<typeof SendRequest>;

export const Usage = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
}).meta({ id: "Usage" });

export const ToolCallRecord = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  result: z.string().describe("What the model was told (cut when long)"),
  is_error: z.boolean(),
}).meta({ id: "ToolCall" });
export type ToolCallRecord = z.output<typeof ToolCallRecord>;

export const STOP_REASONS = [
  "end_turn",
  "max_steps",
  "timeout",
  "repeated_tool_call",
  "max_tokens",
  "error",
] as const;
export const StopReason = z.enum(STOP_REASONS).describe(
  "end_turn: answered; max_steps: the step bound; timeout: the turn timeout; " +
    "repeated_tool_call: the same tool call twice in a row; max_tokens: the answer hit max_tokens; " +
    "error: the turn failed (team steps only)",
);
export type StopReason = z.output<typeof StopReason>;

export const SendReply = z.object({
  id: z.string().describe("Reply identifier `msg_<ULID>`"),
  agent_id: z.string(),
  agent_name: z.string(),
  session_id: z.string(),
  model: z.string(),
  content: z.string().describe("The agent's final answer"),
  tool_calls: z.array(ToolCallRecord),
  usage: Usage,
  stop_reason: StopReason,
  steps: z.number().int().describe("Model calls made in this turn"),
  warnings: z.array(z.string()).optional().describe(
    "What went wrong beside the answer, e.g. the exchange could not be stored in the conversation; absent when nothing did",
  ),
  created_at: Timestamp,
}).meta({ id: "SendReply" });
export type SendReply = z.output<typeof SendReply>;

// ---- teams and runs -----------------------------------------------------------

export const STRATEGIES = ["sequential", "round_robin", "supervisor"] as const;
export const Strategy = z.enum(STRATEGIES);
export type Strategy = z.output<typeof Strategy>;

export const TeamCreate = z.strictObject({
  name: Name.describe("Team name, unique regardless of case"),
  agents: z.array(z.string().min(1).max(200)).min(1).max(MAX_TEAM_AGENTS)
    .describe(
      "Agent ids (or names), in order; for `supervisor` the first one supervises",
    ),
  strategy: Strategy.default("sequential"),
  max_iterations: z.number().int().min(1).max(MAX_ITERATIONS_LIMIT).optional()
    .describe(
      "Bound on agent turns per run (one iteration = one agent turn); " +
        "default: the number of agents for sequential, 10 otherwise",
    ),
  description: z.string().max(1000).optional(),
}).meta({ id: "TeamCreate" });
export type TeamCreate = z.output<typeof TeamCreate>;

export const Team = z.object({
  id: z.string().describe("Team identifier `team_<ULID>`"),
  name: z.string(),
  agents: z.array(z.string()).describe("Agent ids, in order"),
  strategy: Strategy,
  max_iterations: z.number().int(),
  description: z.string(),
  status: z.enum(["active"]),
  created_at: Timestamp,
}).meta({ id: "Team" });
export type Team = z.output<typeof Team>;

export const TeamExecute = z.strictObject({
  task: z.string().min(1).max(MAX_MESSAGE_CHARS).describe("Task text"),
  context: z.record(z.string(), z.unknown()).default({}).describe(
    "Free-form key/value context given to every agent",
  ),
}).meta({ id: "TeamExecute" });
export type TeamExecute = z.output<typeof TeamExecute>;

export const Step = z.object({
  agent: z.string().describe("Agent name"),
  agent_id: z.string(),
  input: z.string(),
  output: z.string(),
  tool_calls: z.array(ToolCallRecord),
  stop_reason: StopReason,
  usage: Usage,
}).meta({ id: "Step" });
export type Step = z.output<typeof Step>;

export const RUN_STATUSES = [
  "running",
  "completed",
  "failed",
  "interrupted",
  "cancelled",
] as const;
export const RUN_STOP_REASONS = [
  "completed",
  "max_iterations",
  "error",
  "interrupted",
  "cancelled",
] as const;

export const Run = z.object({
  id: z.string().describe("Run identifier `run_<ULID>`"),
  team_id: z.string(),
  strategy: Strategy,
  status: z.enum(RUN_STATUSES),
  task: z.string(),
  context: z.record(z.string(), z.unknown()),
  steps: z.array(Step).describe("One per agent turn, in the order they ended"),
  output: z.string().nullable().describe(
    "The run's answer; null until it has one",
  ),
  stop_reason: z.enum(RUN_STOP_REASONS).nullable().describe(
    "completed: the strategy finished; max_iterations: the bound stopped it; " +
      "error: an agent turn failed; interrupted: the daemon stopped during the run; " +
      "cancelled: POST /v1/runs/{run_id}/cancel stopped it; null while running",
  ),
  iterations: z.number().int().describe("Agent turns taken"),
  usage: Usage,
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  created_at: Timestamp,
  finished_at: Timestamp.nullable(),
}).meta({ id: "Run" });
export type Run = z.output<typeof Run>;

// ---- lists and errors ---------------------------------------------------------

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

export const ListQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE)
    .describe(`Page size, 1 to ${MAX_PAGE}`),
  cursor: z.string().min(1).max(4096).optional().describe(
    "`next_cursor` of the previous page",
  ),
});

export const RunListQuery = ListQuery.extend({
  team_id: z.string().min(1).max(200).optional().describe(
    "Only runs of this team (id or name)",
  ),
});

export function pageOf<T extends z.ZodType>(item: T, id: string) {
  return z.object({
    data: z.array(item),
    next_cursor: z.string().nullable().describe(
      "Pass as `cursor` for the next page; null on the last page",
    ),
  }).meta({ id });
}

export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
  }),
}).meta({ id: "Error" });
