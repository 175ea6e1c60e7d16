// The agent runtime as the gateway's `agents__send` and `teams__execute` run
// it (tools/gateway/agent_tools.ts, AgentsPort; cli/ attaches it): the /v1
// schemas, and the service's own send and execute for the caller's agent, so
// an MCP caller may do what the same caller may do at /v1. A refusal the API
// answers 4xx/5xx is a ToolError with the API's message.

import { TaskCancelled, ToolError } from "../tools/kit/mod.ts";
import { StoreUnavailable } from "../platform/store/mod.ts";
import { AgentError } from "./errors.ts";
import { ProviderError } from "./model.ts";
import { Run, SendReply, SendRequest, TeamExecute } from "./schemas.ts";
import type { AgentService } from "./service.ts";
import type { TurnEvent } from "./turn.ts";

/** What both tools' calls carry: the caller's agent (undefined: the operator). */
interface CallOptions {
  actor?: string;
  signal: AbortSignal;
  progress?(progress: number, total?: number, message?: string): void;
}

export function agentsPort(service: AgentService) {
  return {
    sendInput: SendRequest.omit({ stream: true }),
    sendReply: SendReply,
    executeInput: TeamExecute,
    run: Run,
    send: (
      agent: string,
      input: Record<string, unknown>,
      options: CallOptions,
    ): Promise<Record<string, unknown>> =>
      refused(() =>
        service.send(agent, SendRequest.parse({ ...input, stream: false }), {
          signal: options.signal,
          actor: options.actor,
          // The turn's tool calls as progress; its text is not streamed (the
          // model is asked as /v1 asks it without `stream`).
          textEvents: false,
          onEvent: toolProgress(options),
        })
      ),
    // As /v1: a run goes on when its caller goes away; shutdown stops it,
    // and so does cancelling its task (tasks/cancel), as POST /v1/runs/{id}/cancel.
    execute: (
      team: string,
      input: Record<string, unknown>,
      options: CallOptions,
    ): Promise<Record<string, unknown>> =>
      refused(() =>
        service.execute(team, TeamExecute.parse(input), {
          actor: options.actor,
          cancel: {
            signal: options.signal,
            when: (reason) => reason instanceof TaskCancelled,
            by: "the MCP client (tasks/cancel)",
          },
          // Each ended turn: its number, the team's bound, who answered.
          onTurn: (run, maxIterations) => {
            const step = run.steps.at(-1);
            if (step === undefined) return;
            options.progress?.(
              run.iterations,
              maxIterations,
              `${step.agent} answered (turn ${run.iterations} of at most ${maxIterations})`,
            );
          },
        })
      ),
  };
}

/** A turn's tool calls (started, waiting for a person, answered) as progress reports. */
function toolProgress(options: CallOptions): (event: TurnEvent) => void {
  let reports = 0;
  return (event) => {
    const message = event.type === "tool_call_start"
      ? `calling ${event.name}`
      : event.type === "tool_call_waiting"
      ? event.message
      : event.type === "tool_call_end"
      ? `${event.name} answered${event.is_error ? " with an error" : ""}`
      : undefined;
    if (message !== undefined) {
      options.progress?.(++reports, undefined, message);
    }
  };
}

/** The errors /v1 answers with a status (routes/api/v1_http.ts) as ToolErrors with its message. */
async function refused<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProviderError) {
      throw new ToolError(
        error.message.includes(error.provider)
          ? error.message
          : `Provider "${error.provider}": ${error.message}`,
      );
    }
    if (error instanceof AgentError || error instanceof StoreUnavailable) {
      throw new ToolError(error.message);
    }
    throw error;
  }
}
