// The `agents` section of the daemon config: bounds of an agent turn and
// defaults of the /v1 API. Every key is also AGENTD_AGENTS__<KEY>.

import { z } from "zod";
import { PROVIDER_NAME_RE } from "./providers/config.ts";

export const AgentsConfig = z.object({
  default_model: z.string().regex(/^\S+$/, {
    error:
      "expected a model name (gpt-4o-mini) or <provider>/<model name> (openai/gpt-4o-mini)",
  }).optional().describe(
    "Model of agents created without one (`<name>` or `<provider>/<name>`)",
  ),
  default_provider: z.string().regex(PROVIDER_NAME_RE, {
    error: "expected a provider name, e.g. openai or ollama",
  }).optional().describe(
    "Provider of bare model names (`gpt-4o`), asked before the well-known prefixes (gpt- → openai, claude- → anthropic)",
  ),
  max_steps: z.number().int().min(1).max(100).default(10).describe(
    "Model calls per agent turn before it stops with stop_reason max_steps",
  ),
  turn_timeout_ms: z.number().int().min(100).max(3_600_000).default(300_000)
    .describe("Wall time of one agent turn before it stops with timeout"),
  tool_result_max_chars: z.number().int().min(100).max(1_000_000).default(
    16_000,
  ).describe(
    "Tool results longer than this are cut before the model sees them",
  ),
  history_limit: z.number().int().min(0).max(1000).default(50).describe(
    "Earlier messages of the conversation given to the model",
  ),
  act_as: z.record(
    z.string().min(1),
    z.array(z.string().min(1)),
  ).default({}).describe(
    'Agents a caller bound to an agent (its token or JWT) may send to or run in a team as if it were them: caller agent name → agent names, "*" for any; e.g. {"planner": ["writer"]}. Without an entry, an agent acts as itself only',
  ),
  remote_agents: z.array(z.string().min(1)).default([]).describe(
    'Origins of remote A2A agents that may be contacted besides loopback ones, e.g. https://agents.example.com; "*" allows any',
  ),
});
export type AgentsConfig = z.output<typeof AgentsConfig>;
