// The agent runtime behind /v1: agents, sends, teams and runs over the
// repository, the gateway link, the conversations and the model resolver.
// It also is the A2A layer's host (agents/a2a/host.ts).

import { messageOf } from "../platform/errors.ts";
import {
  Conflict,
  Forbidden,
  Invalid,
  NotFound,
  Unavailable,
} from "./errors.ts";
import type { Logger } from "../platform/log.ts";
import type { Store } from "../platform/store/mod.ts";
import type { AgentsConfig } from "./config.ts";
import { Conversations } from "./conversations.ts";
import type { ToolGateway } from "./gateway_link.ts";
import { IdSource } from "./ids.ts";
import type { LocalTool } from "./local_tool.ts";
import {
  type Model,
  ModelNameError,
  type ModelResolver,
  ProviderError,
} from "./model.ts";
import { RunLeases } from "./leases.ts";
import { type Page, type PageRequest, Repository } from "./repository.ts";
import type {
  Agent,
  AgentCreate,
  AgentSummary,
  Run,
  SendReply,
  SendRequest,
  Team,
  TeamCreate,
  TeamExecute,
} from "./schemas.ts";
import { executeTeam, RunCancelled } from "./teams.ts";
import {
  availableOf,
  type AvailableTool,
  resolveToolEntries,
} from "./tool_resolution.ts";
import { runTurn, type TurnEvent, type TurnResult } from "./turn.ts";
import { Work } from "./work.ts";

export interface AgentServiceOptions {
  /** Where agents, teams and runs live (already scoped, e.g. ["agents"]). */
  store: Store;
  gateway: ToolGateway;
  models: ModelResolver;
  config: AgentsConfig;
  log: Logger;
  clock?: () => number;
  /** How often this process renews the leases of its runs and sweeps dead ones; default LEASE_RENEW_MS. */
  leaseRenewMs?: number;
}

export { LEASE_RENEW_MS } from "./leases.ts";

export interface SendOptions {
  signal?: AbortSignal;
  onEvent?: (event: TurnEvent) => void;
  /** Whether `onEvent` hears the answer's text (streamed from the model) too; default true. */
  textEvents?: boolean;
  /** The sending agent, for messages that arrive over A2A. */
  from?: string;
  /** The agent the caller is bound to (its token or JWT); it acts as itself only unless agents.act_as allows more. */
  actor?: string;
}

export class AgentService {
  readonly repository: Repository;
  readonly #options: AgentServiceOptions;
  readonly #ids: IdSource;
  readonly #clock: () => number;
  readonly #conversations: Conversations;
  readonly #localTools = new Map<string, LocalTool>();
  readonly #work = new Work();
  readonly #leases: RunLeases;
  /** The runs executing here: how to stop one, and its end. */
  readonly #running = new Map<
    string,
    { cancel: AbortController; done: Promise<Run> }
  >();

  constructor(options: AgentServiceOptions) {
    this.#options = options;
    this.#clock = options.clock ?? Date.now;
    this.#ids = new IdSource(this.#clock);
    this.repository = new Repository(options.store);
    this.#leases = new RunLeases({
      repository: this.repository,
      log: options.log,
      now: () => this.#now(),
      renewMs: options.leaseRenewMs,
      // Asked through another daemon on the store: stopped here.
      onCancelRequested: (id, request) =>
        this.#running.get(id)?.cancel.abort(new RunCancelled(request.by)),
    });
    this.#conversations = new Conversations({
      gateway: options.gateway,
      store: options.store,
      ids: this.#ids,
    });
  }

  get config(): AgentsConfig {
    return this.#options.config;
  }

  /**
   * Marks interrupted the runs that dead processes left running (a live
   * peer's runs stay), then renews this process's run leases and sweeps for
   * dead ones every `leaseRenewMs` until close().
   */
  async start(): Promise<void> {
    await this.#leases.start();
  }

  /** Owner of this service's run leases. */
  get instanceId(): string {
    return this.#leases.instanceId;
  }

  /** A tool agents can list in `tools` by its name or group (e.g. `a2a__send_message`, `a2a`). */
  addLocalTool(tool: LocalTool): void {
    this.#localTools.set(tool.tool.name, tool);
  }

  // ---- agents -----------------------------------------------------------------

  async createAgent(input: AgentCreate): Promise<Agent> {
    this.#work.assertOpen();
    const model = input.model ?? this.config.default_model;
    if (model === undefined) {
      throw new Invalid(
        "model is required (no agents.default_model is configured): give a model name (`gpt-4o-mini`) or `<provider>/<model name>`",
        { field: "model" },
      );
    }
    this.#checkModel(model);
    const name = input.name.normalize("NFC");
    const resolved = await this.#resolveTools(name, input.tools);
    const agent: Agent = {
      id: this.#ids.next("agt"),
      name,
      model,
      status: "active",
      created_at: this.#now(),
      system_prompt: input.system_prompt,
      description: input.description ??
        input.system_prompt.split("\n")[0].slice(0, 200),
      temperature: input.temperature,
      max_tokens: input.max_tokens,
      tools: input.tools,
      resolved_tools: resolved,
    };
    return await this.repository.createAgent(agent);
  }

  async deleteAgent(ref: string): Promise<void> {
    const agent = await this.repository.getAgent(ref);
    await this.repository.deleteAgent(agent);
    await this.#options.gateway.forget(agent.name);
  }

  /** Agents; an agent-bound `actor` sees the others it may not act as without their system prompt. */
  listAgents(page: PageRequest): Promise<Page<Agent>>;
  listAgents(
    page: PageRequest,
    options: { actor?: string },
  ): Promise<Page<Agent | AgentSummary>>;
  async listAgents(
    page: PageRequest,
    options: { actor?: string } = {},
  ): Promise<Page<Agent | AgentSummary>> {
    const listed = await this.repository.listAgents(page);
    const { actor } = options;
    if (actor === undefined) return listed;
    return {
      ...listed,
      data: listed.data.map((agent) => this.#viewFor(actor, agent)),
    };
  }

  /** One agent, as listAgents shows it to `actor`. */
  getAgent(ref: string): Promise<Agent>;
  getAgent(
    ref: string,
    options: { actor?: string },
  ): Promise<Agent | AgentSummary>;
  async getAgent(
    ref: string,
    options: { actor?: string } = {},
  ): Promise<Agent | AgentSummary> {
    const agent = await this.repository.getAgent(ref);
    return options.actor === undefined
      ? agent
      : this.#viewFor(options.actor, agent);
  }

  #viewFor(actor: string, agent: Agent): Agent | AgentSummary {
    if (this.#mayActAs(actor, agent.name)) return agent;
    const { system_prompt: _hidden, ...summary } = agent;
    return summary;
  }

  async send(
    ref: string,
    input: SendRequest,
    options: SendOptions = {},
  ): Promise<SendReply> {
    this.#work.assertOpen();
    const agent = await this.repository.getAgent(ref);
    this.#assertActsAs(options.actor, [agent]);
    // A turn another agent asked for (A2A) talks in a conversation of that
    // sender's own: a context id it names can never be the agent's own
    // conversation (its id) or one a person or another agent holds.
    const session = options.from === undefined
      ? input.session_id ?? agent.id
      : `from:${options.from}:${input.session_id ?? ""}`;
    const lane = `${agent.id}\u0000${session}`;
    if (this.#work.inside(lane)) {
      // Its own turn asked (a tool that messages agents): it would wait for itself.
      throw new Conflict(
        `Agent "${agent.name}" is in a turn of conversation "${session}" that waits for this ` +
          `answer, so it cannot take this message there; give another session_id`,
        { agent: agent.name, session_id: session },
      );
    }
    const result = await this.#work.run(
      options.signal,
      (signal) =>
        this.#work.serial(
          lane,
          () =>
            this.#turn(agent, {
              message: options.from === undefined
                ? input.message
                : `(message from agent "${options.from}")\n${input.message}`,
              session,
              maxTokens: input.max_tokens,
              signal,
              onEvent: options.onEvent,
              textEvents: options.textEvents,
              userExtra: options.from === undefined
                ? undefined
                : { from: options.from },
            }),
        ),
    );
    return {
      id: this.#ids.next("msg"),
      agent_id: agent.id,
      agent_name: agent.name,
      session_id: session,
      model: agent.model,
      content: result.content,
      tool_calls: result.tool_calls,
      usage: result.usage,
      stop_reason: result.stop_reason,
      steps: result.steps,
      ...result.warnings && { warnings: result.warnings },
      created_at: this.#now(),
    };
  }

  // ---- teams and runs -----------------------------------------------------------

  async createTeam(input: TeamCreate): Promise<Team> {
    this.#work.assertOpen();
    const members: Agent[] = [];
    const unknown: string[] = [];
    for (const ref of input.agents) {
      const agent = await this.repository.findAgent(ref);
      if (agent) members.push(agent);
      else unknown.push(ref);
    }
    if (unknown.length > 0) {
      throw new Invalid(
        `Unknown agent${unknown.length > 1 ? "s" : ""} ${
          unknown.map((ref) => `"${ref}"`).join(", ")
        } in agents; GET /v1/agents lists them`,
        { field: "agents", unknown },
      );
    }
    if (
      input.strategy === "supervisor" &&
      new Set(members.map((a) => a.id)).size < 2
    ) {
      throw new Invalid(
        "A supervisor team needs at least two different agents: the first supervises the others",
        { field: "agents" },
      );
    }
    const team: Team = {
      id: this.#ids.next("team"),
      name: input.name.normalize("NFC"),
      agents: members.map((agent) => agent.id),
      strategy: input.strategy,
      max_iterations: input.max_iterations ??
        (input.strategy === "sequential" ? members.length : 10),
      description: input.description ?? "",
      status: "active",
      created_at: this.#now(),
    };
    return await this.repository.createTeam(team);
  }

  getTeam(ref: string): Promise<Team> {
    return this.repository.getTeam(ref);
  }

  listTeams(page: PageRequest): Promise<Page<Team>> {
    return this.repository.listTeams(page);
  }

  async deleteTeam(ref: string): Promise<void> {
    await this.repository.deleteTeam(await this.repository.getTeam(ref));
  }

  /**
   * An agent-bound caller runs turns as itself only: another agent's turn
   * uses that agent's memory namespace, conversation and policy rules. The
   * operator widens this with agents.act_as.
   */
  #assertActsAs(actor: string | undefined, agents: readonly Agent[]): void {
    if (actor === undefined) return;
    const others = agents.filter((agent) => !this.#mayActAs(actor, agent.name))
      .map((agent) => agent.name);
    if (others.length === 0) return;
    throw new Forbidden(
      `The token of agent "${actor}" cannot act as ${
        others.map((name) => `"${name}"`).join(", ")
      }: an agent sends and runs teams as itself only. Use the daemon token, ` +
        `or allow it in the config: agents.act_as {"${actor}": [${
          others.map((name) => `"${name}"`).join(", ")
        }]}`,
      { agent: actor, others },
    );
  }

  /**
   * Runs `input` on the team `ref`; `actor` as in SendOptions, for every
   * member. `onTurn` hears of each agent turn that ended (the run as saved
   * then, and the team's bound on turns): a caller's progress.
   */
  async execute(
    ref: string,
    input: TeamExecute,
    options: {
      actor?: string;
      onTurn?: (run: Readonly<Run>, maxIterations: number) => void;
      /** Cancels the run when `signal` aborts for a reason `when` accepts (a caller going away is not one). */
      cancel?: {
        signal: AbortSignal;
        when: (reason: unknown) => boolean;
        by: string;
      };
    } = {},
  ): Promise<Run> {
    this.#work.assertOpen();
    const team = await this.repository.getTeam(ref);
    const members: Agent[] = [];
    const missing: string[] = [];
    for (const id of team.agents) {
      const agent = await this.repository.findAgent(id);
      if (agent) members.push(agent);
      else missing.push(id);
    }
    if (missing.length > 0) {
      throw new Conflict(
        `Team "${team.name}" refers to deleted agent${
          missing.length > 1 ? "s" : ""
        } ${missing.join(", ")}; create a new team`,
        { missing },
      );
    }
    this.#assertActsAs(options.actor, members);
    for (const agent of members) this.#checkModel(agent.model);
    const running = `team\u0000${team.id}`;
    if (this.#work.inside(running)) {
      // A member's tool (the gateway's teams__execute) asked: it would never end.
      throw new Conflict(
        `Team "${team.name}" is running this task already: a member cannot run its own team ` +
          `inside the run`,
        { team: team.name },
      );
    }
    const run: Run = {
      id: this.#ids.next("run"),
      team_id: team.id,
      strategy: team.strategy,
      status: "running",
      task: input.task,
      context: input.context,
      steps: [],
      output: null,
      stop_reason: null,
      iterations: 0,
      usage: { input_tokens: 0, output_tokens: 0 },
      error: null,
      created_at: this.#now(),
      finished_at: null,
    };
    this.#leases.hold(run.id);
    const cancel = new AbortController();
    try {
      await this.repository.saveRun(run, this.#leases.lease());
      // A run goes on when its HTTP client goes away; only shutdown and
      // cancelRun stop it.
      const done = this.#work.run(
        cancel.signal,
        (signal) =>
          this.#work.within(running, () =>
            executeTeam(
              {
                turn: (agent, turn) =>
                  this.#work.serial(
                    `${agent.id}\u0000${turn.session}`,
                    () => this.#turn(agent, turn),
                  ),
                save: async (value) => {
                  if (value.status !== "running") {
                    this.#leases.release(value.id);
                  }
                  await this.repository.saveRun(value, this.#leases.lease());
                  if (value.status === "running") {
                    options.onTurn?.(value, team.max_iterations);
                  }
                },
                now: () => this.#now(),
              },
              team,
              members,
              run,
              signal,
            )),
      );
      this.#running.set(run.id, { cancel, done });
      const asked = options.cancel;
      const onAbort = () => {
        if (asked?.when(asked.signal.reason)) {
          cancel.abort(new RunCancelled(asked.by));
        }
      };
      if (asked?.signal.aborted) onAbort();
      asked?.signal.addEventListener("abort", onAbort, { once: true });
      try {
        return await done;
      } finally {
        asked?.signal.removeEventListener("abort", onAbort);
      }
    } finally {
      this.#running.delete(run.id);
      this.#leases.release(run.id);
    }
  }

  /**
   * Stops a running run: at once when it runs here (the turn in progress is
   * aborted; answers the ended run), else at its daemon's next lease renewal
   * (answers the run still running, `settled` false). Whoever may read the run
   * may cancel it (404 otherwise); an ended run is a Conflict.
   */
  async cancelRun(
    id: string,
    options: { actor?: string } = {},
  ): Promise<{ run: Run; settled: boolean }> {
    this.#work.assertOpen();
    const run = await this.getRun(id, options);
    const by = options.actor === undefined
      ? "the operator"
      : `agent "${options.actor}"`;
    const asked = run.status === "running" &&
      await this.repository.requestCancel(id, { by, at: this.#now() });
    if (!asked) {
      const ended = await this.repository.getRun(id);
      throw new Conflict(
        `Run "${id}" is ${ended.status}; only a running run can be cancelled`,
        { id, status: ended.status },
      );
    }
    const local = this.#running.get(id);
    if (local === undefined) return { run, settled: false };
    local.cancel.abort(new RunCancelled(by));
    return { run: await local.done, settled: true };
  }

  /** A run; an agent-bound `actor` sees only runs whose every turn it may act as (404 otherwise). */
  async getRun(id: string, options: { actor?: string } = {}): Promise<Run> {
    const run = await this.repository.getRun(id);
    if (!this.#mayRead(options.actor, run)) {
      // The same answer as a run that does not exist: its id is not confirmed.
      throw new NotFound(`Run "${id}" not found; GET /v1/runs lists them`, {
        id,
      });
    }
    return run;
  }

  /** Runs, newest first; for an agent-bound `actor`, only those it may read (a page may come back short). */
  async listRuns(
    page: PageRequest,
    teamRef?: string,
    options: { actor?: string } = {},
  ): Promise<Page<Run>> {
    const teamId = teamRef === undefined
      ? undefined
      : (await this.repository.getTeam(teamRef)).id;
    const listed = await this.repository.listRuns(page, teamId);
    return options.actor === undefined ? listed : {
      ...listed,
      data: listed.data.filter((run) => this.#mayRead(options.actor, run)),
    };
  }

  /**
   * Reading a run is the same rule as running it: its steps are those
   * agents' turns (their outputs, tool calls), so an agent reads a run when
   * it may act as each of them; one with no turn yet shows it nothing.
   */
  #mayRead(actor: string | undefined, run: Run): boolean {
    if (actor === undefined) return true;
    return run.steps.length > 0 &&
      run.steps.every((step) => this.#mayActAs(actor, step.agent));
  }

  #mayActAs(actor: string, name: string): boolean {
    const allowed = this.config.act_as[actor] ?? [];
    return name === actor || allowed.includes("*") || allowed.includes(name);
  }

  /** Stops new work, lets running turns finish for up to `timeoutMs`, then aborts them. */
  async close(timeoutMs: number): Promise<void> {
    await this.#work.close(timeoutMs);
    // Leases are renewed while the runs drain; the last saves released them.
    await this.#leases.stop();
    await this.#options.gateway.close();
  }

  // ---- internals ----------------------------------------------------------------------

  async #turn(
    agent: Agent,
    turn: {
      message: string;
      session: string;
      maxTokens?: number;
      localTools?: LocalTool[];
      signal: AbortSignal;
      onEvent?: (event: TurnEvent) => void;
      textEvents?: boolean;
      userExtra?: { [key: string]: string };
    },
  ): Promise<TurnResult> {
    const model = this.#model(agent.model);
    const local = agent.resolved_tools.flatMap((name) => {
      const tool = this.#localTools.get(name);
      return tool ? [tool] : [];
    });
    return await runTurn({
      gateway: this.#options.gateway,
      conversations: this.#conversations,
      config: this.config,
      log: this.#options.log,
    }, {
      agent,
      model,
      message: turn.message,
      session: turn.session,
      maxTokens: turn.maxTokens,
      localTools: [...local, ...turn.localTools ?? []],
      gatewayTools: agent.resolved_tools.filter((name) =>
        !this.#localTools.has(name)
      ),
      userExtra: turn.userExtra,
      signal: turn.signal,
      onEvent: turn.onEvent,
      textEvents: turn.textEvents,
    });
  }

  #model(name: string): Model {
    return this.#options.models.resolve(name);
  }

  /** A name the resolver cannot place is the caller's mistake (Invalid); a provider that is down is not. */
  #checkModel(model: string): void {
    try {
      this.#model(model);
    } catch (error) {
      if (error instanceof ProviderError) return;
      throw new Invalid(messageOf(error), {
        field: "model",
        providers: this.#options.models.providers(),
        ...(error instanceof ModelNameError && error.tried.length > 0
          ? { tried: error.tried }
          : {}),
      });
    }
  }

  /**
   * The server of each tool an agent can be given, by tool name, as the
   * listings' origins (`_meta`) say; only local tools when the gateway is
   * not running.
   */
  async toolServers(): Promise<Map<string, string>> {
    const tools = [...this.#localTools.values()].map((local) => local.tool);
    if (this.#options.gateway.running()) {
      tools.push(
        ...await this.#options.gateway.listTools("").catch(() => []),
      );
    }
    const servers = new Map<string, string>();
    for (const tool of tools) {
      if (tool.origin) servers.set(tool.name, tool.origin.server);
    }
    return servers;
  }

  async #resolveTools(agent: string, entries: string[]): Promise<string[]> {
    if (entries.length === 0) return [];
    const local = [...this.#localTools.values()].map((local) =>
      availableOf(local.tool)
    );
    let listed: AvailableTool[];
    try {
      listed = (await this.#options.gateway.listTools(agent)).map(availableOf);
    } catch (error) {
      // Without the gateway, only local tools can be given.
      try {
        return resolveToolEntries(entries, local);
      } catch {
        throw new Unavailable(
          `Cannot give agent "${agent}" its tools: ${messageOf(error)}`,
        );
      }
    }
    return resolveToolEntries(entries, [...listed, ...local]);
  }

  #now(): string {
    return new Date(this.#clock()).toISOString();
  }
}
