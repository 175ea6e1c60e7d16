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
      return agent && a2aAgentOf(agent, await serversOf([agent]));
    },
    async listAgents() {
      const agents: Agent[] = [];
      let cursor: string | undefined;
      do {
        const page = await service.listAgents({ limit: 100, cursor });
        agents.push(...page.data);
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      const servers = await serversOf(agents);
      return agents.map((agent) => a2aAgentOf(agent, servers));
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

  /** Each tool's server, from the listings' origins; asked only when an agent has tools. */
  async function serversOf(
    agents: readonly Agent[],
  ): Promise<ReadonlyMap<string, string>> {
    if (agents.every((agent) => agent.resolved_tools.length === 0)) {
      return new Map();
    }
    return await service.toolServers();
  }
}

function a2aAgentOf(
  agent: Agent,
  servers: ReadonlyMap<string, string>,
): A2AAgent {
  const toolServers: Record<string, string> = {};
  for (const tool of agent.resolved_tools) {
    const server = servers.get(tool);
    if (server !== undefined) toolServers[tool] = server;
  }
  return {
    id: agent.id,
    name: agent.name,
    description: agent.description,
    model: agent.model,
    tools: agent.resolved_tools,
    toolServers,
    created_at: agent.created_at,
  };
}
