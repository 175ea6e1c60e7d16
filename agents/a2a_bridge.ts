// The agent runtime as the A2A layer sees it (agents/a2a/host.ts): agents by
// name or id, and one turn of an agent per A2A message.

import type { Store } from "../platform/store/mod.ts";
import type { A2AAgent, A2AHost } from "./a2a/host.ts";
import type { Agent } from "./schemas.ts";
import type { AgentService } from "./service.ts";

/** The A2A layer's view of `service`; `store` is where A2A keeps messages and tasks (e.g. scoped ["a2a"]). */
export function a2aHostOf(service: AgentService, store: Store): A2AHost {
  return {
    async findAgent(ref) {
      const agent = await service.repository.findAgent(ref);
      return agent && a2aAgentOf(agent);
    },
    async listAgents() {
      const all: A2AAgent[] = [];
      let cursor: string | undefined;
      do {
        const page = await service.listAgents({ limit: 100, cursor });
        all.push(...page.data.map(a2aAgentOf));
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      return all;
    },
    async runTurn(agent, input, options) {
      const reply = await service.send(agent.id, {
        message: input.text,
        stream: false,
        session_id: input.session_id,
      }, {
        signal: options.signal,
        from: input.from,
        onEvent: options.onText &&
          ((event) => {
            if (event.type === "text") options.onText?.(event.delta);
          }),
      });
      return { content: reply.content, stop_reason: reply.stop_reason };
    },
    store,
  };
}

function a2aAgentOf(agent: Agent): A2AAgent {
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    model: agent.model,
    tools: agent.resolved_tools,
    created_at: agent.created_at,
  };
}
