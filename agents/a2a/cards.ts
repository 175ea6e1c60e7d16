// Which card answers a request: a local agent's (found by name or id, the
// version the client announces) or a remote agent's (read through
// RemoteAgents), with the runtime's own errors (agents/errors.ts) for an
// unknown agent or a remote that is refused or fails. The card views
// themselves are card.ts's.

import type { JsonValue } from "../../platform/store/mod.ts";
import { Forbidden, NotFound, UpstreamFailed } from "../errors.ts";
import { a2aCard, agentdCard, legacyCard } from "./card.ts";
import {
  isRemoteAddress,
  RemoteAgentError,
  RemoteAgentForbidden,
  type RemoteAgents,
} from "./client.ts";
import type { A2AAgent, A2AHost } from "./host.ts";

type JsonObject = { [key: string]: JsonValue };

/** Where the daemon is reached, for the URLs a card names. */
export interface CardPlace {
  /** The daemon's origin, `{base_url}`. */
  origin: string;
  /** Where the agents' A2A endpoints are mounted (`/v1/a2a`). */
  a2aPath: string;
}

export class AgentCards {
  readonly #host: A2AHost;
  readonly #remote: RemoteAgents;

  constructor(host: A2AHost, remote: RemoteAgents) {
    this.#host = host;
    this.#remote = remote;
  }

  /** A local agent by name or id; NotFound otherwise. */
  async agent(ref: string): Promise<A2AAgent> {
    const agent = await this.#host.findAgent(ref);
    if (!agent) throw new NotFound(`No agent "${ref}" here (name or id)`);
    return agent;
  }

  /** The agent `ref` names, else the first agent; NotFound when there is none. */
  async defaultAgent(ref?: string): Promise<A2AAgent> {
    if (ref !== undefined) return await this.agent(ref);
    const [first] = await this.#host.listAgents();
    if (!first) {
      throw new NotFound("No agents here yet: create one with POST /v1/agents");
    }
    return first;
  }

  /**
   * agentd's card of `ref`: a local agent's name or id, or an http(s)
   * address of a remote agent, whose card is read (Forbidden when the config
   * does not allow it, UpstreamFailed when it cannot be read).
   */
  async agentd(
    ref: string,
    place: CardPlace,
    signal?: AbortSignal,
  ): Promise<JsonObject> {
    if (!isRemoteAddress(ref)) {
      const agent = await this.agent(ref);
      return agentdCard(a2aCard(agent, cardOptions(agent, place)));
    }
    try {
      return (await this.#remote.card(ref, signal)).agentd;
    } catch (error) {
      if (error instanceof RemoteAgentForbidden) {
        throw new Forbidden(error.message, { address: ref });
      }
      if (error instanceof RemoteAgentError) {
        throw new UpstreamFailed(error.message, {
          address: ref,
          reason: error.reason,
        });
      }
      throw error;
    }
  }

  /**
   * `agent`'s A2A card for a client announcing `version` (its A2A-Version
   * header): v1.0 for `1.x`, else 0.3 with the v1.0 interfaces embedded.
   */
  forClient(
    agent: A2AAgent,
    place: CardPlace,
    version: string | undefined,
  ): JsonObject {
    const options = cardOptions(agent, place);
    const card = a2aCard(agent, options);
    return /^1(\.|$)/.test(version?.trim() ?? "")
      ? card
      : legacyCard(card, options.endpoint);
  }
}

function cardOptions(agent: A2AAgent, place: CardPlace) {
  return {
    endpoint: `${place.origin}${place.a2aPath}/${
      encodeURIComponent(agent.name)
    }`,
    baseUrl: place.origin,
  };
}
