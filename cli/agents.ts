// The agent runtime of `agentd serve`: agents, teams and runs in the store
// (scoped ["agents"], A2A under ["a2a"]), tools through the hosted gateway,
// models through the configured providers, and the A2A layer over them.

import { A2AService } from "../agents/a2a/mod.ts";
import { a2aMessagingTool } from "../agents/a2a/tool.ts";
import { a2aHostOf } from "../agents/a2a_bridge.ts";
import { AgentsConfig } from "../agents/config.ts";
import { GatewayLink } from "../agents/gateway_link.ts";
import {
  createModelResolver,
  ProvidersConfig,
} from "../agents/providers/mod.ts";
import { providerNames } from "../agents/providers/config.ts";
import { ConfigError } from "../platform/config_merge.ts";
import { AgentService } from "../agents/service.ts";
import { agentsPort } from "../agents/gateway_tools.ts";
import { loadGatewayModule } from "../tools/registry.ts";
import type { Logger } from "../platform/log.ts";
import { scoped, type Store } from "../platform/store/mod.ts";
import type { HostedServer } from "../tools/kit/host.ts";
import { peerOf } from "../tools/kit/transport/peer.ts";
import type { Settings } from "./boot.ts";

export async function startAgents(options: {
  settings: Settings;
  store: Store;
  hosts: readonly HostedServer[];
  log: Logger;
  env: Readonly<Record<string, string>>;
}): Promise<{ agents: AgentService; a2a: A2AService }> {
  const { settings, store, log } = options;
  const agentsConfig = AgentsConfig.parse(settings.values.agents ?? {});
  const providers = ProvidersConfig.parse(settings.values.providers ?? {});
  const fallback = agentsConfig.default_provider;
  if (fallback !== undefined && !providerNames(providers).includes(fallback)) {
    throw new ConfigError(
      `agents.default_provider: "${fallback}" is not a provider; providers: ${
        providerNames(providers).join(", ")
      } (add it under "providers")`,
    );
  }
  const gateway = options.hosts.find((host) => host.id === "gateway");
  const service = new AgentService({
    store: scoped(store, ["agents"]),
    gateway: new GatewayLink(gateway && peerOf(gateway)),
    models: createModelResolver({
      config: providers,
      env: options.env,
      log,
      defaultProvider: agentsConfig.default_provider,
    }),
    config: agentsConfig,
    log: log.child({ component: "agents" }),
  });
  await service.start();
  const a2a = new A2AService({
    host: a2aHostOf(service, scoped(store, ["a2a"])),
    log,
    remote: { allowedOrigins: agentsConfig.remote_agents },
  });
  await a2a.start();
  // Agents list `a2a` (or `a2a__send_message`) in their tools to message other agents.
  service.addLocalTool(a2aMessagingTool(a2a));
  await offerToGateway(gateway, service);
  return { agents: service, a2a };
}

/**
 * The gateway's `agents__send` and `teams__execute` (MCP clients drive the
 * /v1 agents): the running gateway gets the service through its port.
 */
export async function offerToGateway(
  gateway: HostedServer | undefined,
  service: AgentService,
): Promise<void> {
  if (gateway?.phase.phase !== "running") return;
  // Not imported at the top: serve loads no server module before it starts one.
  const { attachAgents } = await loadGatewayModule();
  attachAgents(gateway.context(), agentsPort(service));
}
