// `agents__send` and `teams__execute`: MCP clients of the gateway drive the
// /v1 agents. The gateway does not know agents (it may not import agents/):
// the daemon hands it an AgentsPort once the agent runtime runs (cli/), and
// these tools are listed and called beside the upstreams' while it is
// attached. Each is a ToolDef run through the kit's pipeline (validation,
// policy and audit as `agents.send` / `teams.execute`, output schema), and
// the port runs the /v1 service's own code for the caller's identity, so a
// call may do exactly what the same caller may do at /v1.

import { z } from "zod";
import type { CallToolResult, Tool } from "../../platform/mcp_sdk.ts";
import {
  type CallContext,
  type CallJudge,
  type ToolDef,
  toolDefiner,
} from "../kit/mod.ts";
import { listingOf, runDefinedCall } from "../kit/tool_call.ts";
import { gatewayName } from "../kit/tool_names.ts";

type JsonObject = Record<string, unknown>;

/** What one call of the port runs as: the caller's agent (undefined: the operator). */
export interface AgentsCallOptions {
  actor?: string;
  signal: AbortSignal;
  /** How far the work is (a team run: each agent turn that ended). */
  progress(progress: number, total?: number, message?: string): void;
}

/**
 * The /v1 agent runtime as the gateway's tools use it. Its schemas are the
 * /v1 ones (the tools take and answer what the API does); its calls run the
 * service's own checks for `actor` and throw a readable ToolError when the
 * API would answer 4xx/5xx.
 */
export interface AgentsPort {
  /** The body of `POST /v1/agents/{id}/send` without `stream`. */
  readonly sendInput: z.ZodObject;
  /** Its reply (`SendReply`). */
  readonly sendReply: z.ZodObject;
  /** The body of `POST /v1/teams/{id}/execute`. */
  readonly executeInput: z.ZodObject;
  /** Its reply: the finished run (`Run`). */
  readonly run: z.ZodObject;
  send(
    agent: string,
    input: Record<string, unknown>,
    options: AgentsCallOptions,
  ): Promise<JsonObject>;
  execute(
    team: string,
    input: Record<string, unknown>,
    options: AgentsCallOptions,
  ): Promise<JsonObject>;
}

/** One tool the port adds: its gateway name, listing and definition. */
export interface AgentTool {
  /** The server its origin names (`agents`, `teams`): it is judged as `<server>.<tool>`. */
  server: string;
  def: ToolDef<AgentsPort>;
  listing: Tool;
}

const define = toolDefiner<AgentsPort>();

/** The tools an attached port adds, by gateway name (tool_names.ts builds the names). */
export function agentTools(port: AgentsPort): Map<string, AgentTool> {
  const send = define({
    name: "send",
    title: "Send a message to an agent",
    description:
      "Sends a message to an agent of this daemon and returns its reply, as POST /v1/agents/{id}/send: " +
      "the agent runs one turn (its model, its tools) in the conversation `session_id` (default: its own). " +
      "An agent's token sends as that agent only, unless agents.act_as allows more.",
    input: z.object({
      agent: z.string().min(1).max(200).describe("The agent's id or name"),
      ...port.sendInput.shape,
    }),
    // A new object: the API's named schema would list as a bare $ref.
    output: z.object(port.sendReply.shape),
    annotations: { readOnlyHint: false, openWorldHint: true },
    taskSupport: "optional",
    touches: [],
    async handle(agents, args, call) {
      const { agent, ...input } = args;
      return answer(await agents.send(agent, input, optionsOf(call)));
    },
  });
  const execute = define({
    name: "execute",
    title: "Run a team",
    description:
      "Runs a task on a team of agents and returns the finished run, as POST /v1/teams/{id}/execute: " +
      "its steps (one per agent turn), output, stop_reason and usage. The run is stored (GET /v1/runs/{id}). " +
      "Called as a task, tasks/cancel cancels the run (stop_reason `cancelled`), as POST /v1/runs/{id}/cancel does. " +
      "An agent's token runs teams whose every member it may act as.",
    input: z.object({
      team: z.string().min(1).max(200).describe("The team's id or name"),
      ...port.executeInput.shape,
    }),
    output: z.object(port.run.shape),
    annotations: { readOnlyHint: false, openWorldHint: true },
    taskSupport: "optional",
    touches: [],
    async handle(agents, args, call) {
      const { team, ...input } = args;
      return answer(await agents.execute(team, input, optionsOf(call)));
    },
  });
  const tools = new Map<string, AgentTool>();
  for (const [server, def] of [["agents", send], ["teams", execute]] as const) {
    const name = gatewayName(server, def.name).name;
    // listingOf lists taskSupport as `execution`: the kit runs it as a task when asked.
    tools.set(name, {
      server,
      def,
      listing: { ...listingOf(def, server), name },
    });
  }
  return tools;
}

/** The /v1 reply as the result's structuredContent, and as its text for models. */
function answer(value: JsonObject): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
    structuredContent: value,
  };
}

function optionsOf(call: CallContext): AgentsCallOptions {
  return {
    actor: call.caller.agent,
    signal: call.signal,
    progress(progress, total, message) {
      call.progress(progress, total, message).catch(() => {});
    },
  };
}

/** One call of an attached tool, through the kit's pipeline as any defined tool. */
export function callAgentTool(
  tool: AgentTool,
  port: AgentsPort,
  args: Record<string, unknown>,
  options: { guard: CallJudge | undefined; call: CallContext },
): Promise<CallToolResult> {
  return runDefinedCall(tool.def, args, {
    server: tool.server,
    context: () => port,
    guard: options.guard,
    call: options.call,
    connection: options.call.connection,
  });
}
