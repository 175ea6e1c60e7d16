// Team strategies over agent turns. One iteration = one agent turn (a
// delegated turn and the supervisor's own turn count one each); the run stops
// with stop_reason `max_iterations` when a turn it needs would exceed the bound.
//
// - sequential: each agent once, in order; each gets the task, the context and
//   the previous agent's output. The run's output is the last agent's output.
// - round_robin: the agents in turn, over and over, each getting the task,
//   the context and the previous output, until one signals completion: it calls
//   `team__complete` {result} (the run's output is `result`), or its answer
//   contains COMPLETION_MARKER (the output is the answer without the marker).
// - supervisor: the first agent gets `team__delegate` {agent, task}, which runs
//   one turn of the named team member and returns its output; the
//   supervisor's answer is the run's output.
//
// Team turns use the conversation `session_id = <run id>`, so an agent keeps
// its own earlier turns of the same run and its default conversation stays clean.

import { messageOf } from "../platform/errors.ts";
import { AgentError } from "./errors.ts";
import type { LocalTool } from "./local_tool.ts";
import { ProviderError } from "./model.ts";
import type { Agent, Run, Step, Team } from "./schemas.ts";
import type { TurnResult } from "./turn.ts";

export const COMPLETION_MARKER = "TASK_COMPLETE";

/** The abort reason of a run someone cancelled (POST /v1/runs/{id}/cancel). */
export class RunCancelled extends Error {
  constructor(readonly by: string) {
    super(`Cancelled by ${by}`);
  }
}

export interface TeamRunDeps {
  turn(
    agent: Agent,
    input: {
      message: string;
      session: string;
      localTools: LocalTool[];
      signal: AbortSignal;
    },
  ): Promise<TurnResult>;
  save(run: Run): Promise<void>;
  now(): string;
}

/** Runs `run` (status running) to its end; a failing turn fails the run (returned, not thrown). */
export async function executeTeam(
  deps: TeamRunDeps,
  team: Team,
  members: readonly Agent[],
  run: Run,
  signal: AbortSignal,
): Promise<Run> {
  const state = new RunState(deps, run, signal, team.max_iterations);
  try {
    if (team.strategy === "sequential") {
      await sequential(state, members);
    } else if (team.strategy === "round_robin") {
      await roundRobin(state, members);
    } else {
      await supervised(state, team, members);
    }
  } catch (error) {
    if (signal.reason instanceof RunCancelled) {
      return await state.finish("cancelled", "cancelled", null, {
        code: "cancelled",
        message: `${signal.reason.message}; the turn in progress was stopped`,
      });
    }
    if (signal.aborted) {
      return await state.finish("interrupted", "interrupted", null, {
        code: "interrupted",
        message:
          "The daemon stopped during this run; execute the task again to retry",
      });
    }
    return await state.finish("failed", "error", null, errorOf(error));
  }
  return run;
}

class RunState {
  constructor(
    readonly deps: TeamRunDeps,
    readonly run: Run,
    readonly signal: AbortSignal,
    readonly maxIterations: number,
  ) {}

  /** Another turn would exceed the team's bound. */
  get atBound(): boolean {
    return this.run.iterations >= this.maxIterations;
  }

  async turn(
    agent: Agent,
    message: string,
    localTools: LocalTool[] = [],
  ): Promise<TurnResult> {
    // Cancelled between turns: no turn starts (and none is recorded).
    this.signal.throwIfAborted();
    this.run.iterations++;
    let result: TurnResult;
    try {
      result = await this.deps.turn(agent, {
        message,
        session: this.run.id,
        localTools,
        signal: this.signal,
      });
    } catch (error) {
      this.#record(agent, message, {
        content: messageOf(error),
        tool_calls: [],
        usage: { input_tokens: 0, output_tokens: 0 },
        stop_reason: "error",
        steps: 0,
      });
      await this.deps.save(this.run);
      throw error;
    }
    this.#record(agent, message, result);
    await this.deps.save(this.run);
    return result;
  }

  #record(agent: Agent, input: string, result: TurnResult): void {
    const step: Step = {
      agent: agent.name,
      agent_id: agent.id,
      input,
      output: result.content,
      tool_calls: result.tool_calls,
      stop_reason: result.stop_reason,
      usage: result.usage,
    };
    this.run.steps.push(step);
    this.run.usage.input_tokens += result.usage.input_tokens;
    this.run.usage.output_tokens += result.usage.output_tokens;
  }

  /** Ends the run with `max_iterations`, and `output`, when it is at its bound. */
  async stopAtBound(output: string | null): Promise<boolean> {
    if (!this.atBound) return false;
    await this.finish("completed", "max_iterations", output);
    return true;
  }

  async finish(
    status: Run["status"],
    stop: NonNullable<Run["stop_reason"]>,
    output: string | null,
    error: Run["error"] = null,
  ): Promise<Run> {
    Object.assign(this.run, {
      status,
      stop_reason: stop,
      output,
      error,
      finished_at: this.deps.now(),
    });
    await this.deps.save(this.run);
    return this.run;
  }
}

async function sequential(
  state: RunState,
  members: readonly Agent[],
): Promise<void> {
  let previous: { agent: string; output: string } | undefined;
  for (const agent of members) {
    if (await state.stopAtBound(previous?.output ?? null)) return;
    const result = await state.turn(
      agent,
      compose(state.run, previous),
    );
    previous = { agent: agent.name, output: result.content };
  }
  await state.finish("completed", "completed", previous?.output ?? null);
}

async function roundRobin(
  state: RunState,
  members: readonly Agent[],
): Promise<void> {
  let previous: { agent: string; output: string } | undefined;
  for (let i = 0;; i++) {
    if (await state.stopAtBound(previous?.output ?? null)) return;
    const agent = members[i % members.length];
    let completed: string | undefined;
    const complete: LocalTool = {
      tool: {
        name: "team__complete",
        origin: { server: "team", tool: "complete" },
        description:
          "Declare the team's task complete; `result` becomes the team's final output.",
        parameters: {
          type: "object",
          properties: {
            result: { type: "string", description: "The final result" },
          },
          required: ["result"],
          additionalProperties: false,
        },
      },
      call(args) {
        const result = args.result;
        if (typeof result !== "string") {
          return Promise.reject(new Error("`result` must be a string"));
        }
        completed = result;
        return Promise.resolve(
          "Recorded: the task is complete. End your turn now.",
        );
      },
    };
    const message = compose(state.run, previous) +
      `\n\nThe team takes turns (${members.map((m) => m.name).join(" → ")}). ` +
      `When the task is complete, call team__complete with the final result, ` +
      `or include ${COMPLETION_MARKER} in your answer.`;
    const result = await state.turn(agent, message, [complete]);
    if (completed !== undefined) {
      await state.finish("completed", "completed", completed);
      return;
    }
    if (result.content.includes(COMPLETION_MARKER)) {
      const output = result.content.replaceAll(COMPLETION_MARKER, "").trim();
      await state.finish("completed", "completed", output);
      return;
    }
    previous = { agent: agent.name, output: result.content };
  }
}

async function supervised(
  state: RunState,
  team: Team,
  members: readonly Agent[],
): Promise<void> {
  const [supervisor, ...rest] = members;
  const workers = rest.filter((agent, index) =>
    agent.id !== supervisor.id &&
    rest.findIndex((other) => other.id === agent.id) === index
  );
  let boundHit = false;
  const delegate: LocalTool = {
    tool: {
      name: "team__delegate",
      origin: { server: "team", tool: "delegate" },
      description:
        "Give a task to a member of your team and get their answer back. Members: " +
        (workers.map((w) => `${w.name} (${w.description || "no description"})`)
          .join("; ") || "none"),
      parameters: {
        type: "object",
        properties: {
          agent: { type: "string", enum: workers.map((w) => w.name) },
          task: { type: "string", description: "What the member should do" },
        },
        required: ["agent", "task"],
        additionalProperties: false,
      },
    },
    async call(args) {
      const worker = workers.find((w) => w.name === args.agent);
      if (!worker) {
        throw new Error(
          `No team member "${String(args.agent)}"; members: ${
            workers.map((w) => w.name).join(", ")
          }`,
        );
      }
      if (typeof args.task !== "string" || args.task === "") {
        throw new Error("`task` must be a non-empty string");
      }
      if (state.atBound) {
        boundHit = true;
        throw new Error(
          `The team's iteration bound (${team.max_iterations} agent turns) is reached: ` +
            "no more delegation; answer now with what you have.",
        );
      }
      const result = await state.turn(
        worker,
        compose({ ...state.run, task: args.task }, undefined),
      );
      return result.content;
    },
  };
  const message = compose(state.run, undefined) +
    `\n\nYou supervise this team. Delegate parts of the task with team__delegate ` +
    `(members: ${workers.map((w) => w.name).join(", ") || "none"}), ` +
    `then answer with the final result.`;
  // Its step is recorded after the delegated ones, which end first.
  const result = await state.turn(supervisor, message, [delegate]);
  await state.finish(
    "completed",
    boundHit ? "max_iterations" : "completed",
    result.content,
  );
}

/** What an agent of a team is given. */
function compose(
  run: Pick<Run, "task" | "context">,
  previous: { agent: string; output: string } | undefined,
): string {
  let text = `Task: ${run.task}`;
  if (Object.keys(run.context).length > 0) {
    text += `\n\nContext:\n${JSON.stringify(run.context, null, 2)}`;
  }
  if (previous) {
    text +=
      `\n\nOutput of ${previous.agent} (previous step):\n${previous.output}`;
  }
  return text;
}

function errorOf(error: unknown): { code: string; message: string } {
  if (error instanceof ProviderError) {
    return { code: "provider_error", message: messageOf(error) };
  }
  if (error instanceof AgentError) {
    return { code: error.kind, message: error.message };
  }
  return { code: "turn_failed", message: messageOf(error) };
}
