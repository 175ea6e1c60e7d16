// The A2A layer of agentd: agent cards, agentd's message envelopes with
// inboxes, and an A2A server (JSON-RPC, protocol 1.0 and 0.3) per agent,
// all over the A2AHost contract (host.ts). routes/api/a2a.ts is its HTTP face;
// tool.ts lets agents message each other.

import type { Logger } from "../../platform/log.ts";
import { AgentCards } from "./cards.ts";
import { RemoteAgents, type RemoteAgentsOptions } from "./client.ts";
import { Envelopes } from "./envelope.ts";
import type { A2AHost } from "./host.ts";
import { TaskRuns } from "./task_runs.ts";
import { isTerminal, TaskStore } from "./tasks.ts";

export interface A2AServiceOptions {
  host: A2AHost;
  log: Logger;
  /** Used for every remote call (cards, delivery); default `fetch`. */
  fetchFn?: typeof fetch;
  remote?: Omit<RemoteAgentsOptions, "fetchFn">;
}

export class A2AService {
  readonly host: A2AHost;
  readonly log: Logger;
  readonly remote: RemoteAgents;
  /** Local agents and the cards of local and remote ones. */
  readonly cards: AgentCards;
  readonly envelopes: Envelopes;
  readonly tasks: TaskStore;
  /** The turns running as tasks in this process. */
  readonly runs: TaskRuns;

  constructor(options: A2AServiceOptions) {
    this.host = options.host;
    this.log = options.log.child({ component: "a2a" });
    this.remote = new RemoteAgents({
      ...options.remote,
      fetchFn: options.fetchFn,
    });
    this.cards = new AgentCards(this.host, this.remote);
    this.envelopes = new Envelopes({
      host: this.host,
      remote: this.remote,
      log: this.log,
    });
    this.tasks = new TaskStore(this.host.store);
    this.runs = new TaskRuns(this.host, this.tasks, this.log);
  }

  /**
   * Tasks a previous process left `submitted` or `working` can never finish
   * (their turn died with it): they are marked failed, saying why, instead
   * of looking alive forever. Call once at start-up, before serving.
   */
  async start(): Promise<void> {
    const now = new Date().toISOString();
    for (const agent of await this.host.listAgents()) {
      for (const state of ["submitted", "working"] as const) {
        // Each pass fails the first page, which then no longer matches.
        for (let pass = 0; pass < 1000; pass++) {
          const page = await this.tasks.list(agent.id, { state }, {
            page_size: 100,
          });
          if (page.tasks.length === 0) break;
          for (const listed of page.tasks) {
            const stored = await this.tasks.get(listed.id);
            if (!stored || isTerminal(stored.task.state)) continue;
            await this.tasks.save({
              ...stored.task,
              state: "failed",
              error: "interrupted: the daemon stopped while this task ran",
              status_timestamp: now,
              updated_at: now,
            }, stored.version);
          }
        }
      }
    }
  }

  /** Cancels the turns still running (recorded as canceled); call before closing the store. */
  async close(): Promise<void> {
    await this.runs.close();
  }
}
