// What the A2A layer needs from the agent runtime, and nothing more: find
// agents, run one turn of one, and a store for messages and tasks.

import type { Store } from "../../platform/store/mod.ts";

export interface A2AAgent {
  id: string;
  name: string;
  /** The agent's system prompt's first line or a description; shown on its card. */
  description: string;
  model: string;
  /** The agent's tool entries (gateway names); shown as skills on its card. */
  tools: string[];
  /**
   * The server of each of `tools`, as the gateway's listing names it (its
   * `_meta` origin; a long name is shortened and cannot be split): a
   * skill's tag. A tool the gateway does not list now has none.
   */
  toolServers?: Readonly<Record<string, string>>;
  created_at: string;
}

export interface TurnInput {
  text: string;
  /** Keeps an A2A context (contextId) in one conversation of the agent. */
  session_id?: string;
  /** The sending agent's name or address, when known. */
  from?: string;
}

export interface TurnOutput {
  content: string;
  stop_reason: string;
}

export interface A2AHost {
  /** An agent by name or id. */
  findAgent(ref: string): Promise<A2AAgent | undefined>;
  listAgents(): Promise<A2AAgent[]>;
  /** One turn of `agent`; rejects with an Error a person can read (provider down, bound hit). */
  runTurn(
    agent: A2AAgent,
    input: TurnInput,
    options: { signal?: AbortSignal; onText?: (delta: string) => void },
  ): Promise<TurnOutput>;
  /** Where A2A keeps messages, inboxes and tasks (already scoped). */
  store: Store;
}
