// The gateway (svc-mcp-gateway): every MCP server behind one endpoint.
// In `agentd serve` it is /mcp, with every built-in server as an in-process
// upstream; alone it is `agentd mcp gateway --port 8765 --config FILE`.

import { openSecrets } from "../../platform/secrets.ts";
import { defineServer, gatherTools } from "../kit/mod.ts";
import { TOOL_LISTINGS } from "./tool_listings.ts";
import { adminSection } from "./admin_view.ts";
import { GatewayConfig } from "./config.ts";
import { Announcer, openCoordinationStore } from "./announcements.ts";
import { Gateway, GATEWAY_ID } from "./gateway.ts";
import { storeWithDeadline } from "./deadlines.ts";
import * as gatewayTools from "./gateway_tools.ts";
import { forwardedSession } from "./upstream.ts";
import type { AgentsPort } from "./agent_tools.ts";

export type { AgentsCallOptions, AgentsPort } from "./agent_tools.ts";

/**
 * Gives the running gateway (a HostedServer's `context()`) the daemon's
 * agent runtime: `agents__send` and `teams__execute` are listed and callable
 * until the returned function detaches it.
 */
export function attachAgents(gateway: unknown, port: AgentsPort): () => void {
  if (!(gateway instanceof Gateway)) {
    throw new Error("attachAgents: that is not a running gateway's context");
  }
  return gateway.attachAgents(port);
}

/** tools/list order (tests/tools/gateway/seed_test.ts pins it); name every tool here. */
const ORDER = [
  "list_servers",
  "register_server",
  "unregister_server",
  "route_tool_call",
  "broadcast_tool_call",
  "get_server_health",
  "get_server_tools",
  "discover_servers",
];

const tools = gatherTools(ORDER, { gateway: gatewayTools });

export const gatewayServer = defineServer<Gateway>({
  id: GATEWAY_ID,
  namespace: "svc-mcp-gateway",
  title: "MCP gateway",
  version: "1.0.0",
  instructions:
    "One endpoint for many MCP servers. Upstream tools are listed as <server>__<tool> and called " +
    "directly; route_tool_call and broadcast_tool_call call by server and tool name. " +
    "list_servers, get_server_health and get_server_tools show what is behind the gateway; " +
    "register_server/unregister_server change it; discover_servers finds servers to register.",
  config: GatewayConfig,
  listings: TOOL_LISTINGS, // tools/list entries, generated: tools/tool_listings.ts
  tools,
  aggregates: true,
  // The upstreams' resources and prompts, listed and read through the gateway.
  dynamicLists: { resources: true, prompts: true },
  // Big results upstreams keep as resources (agentd://<server>/results/<id>), read through /mcp.
  resourceTemplates: [{
    uriTemplate: "agentd://{server}/results/{id}",
    name: "upstream-result",
    title: "A big result an upstream kept for this session",
    // Read as the caller, as a listed resource is (Upstream.read): an agent
    // reads no external upstream with the registration's credentials.
    async read(gateway, uri, variables, request) {
      const server = variables.server;
      const read = await gateway.get(typeof server === "string" ? server : "")
        .read(uri.href, request);
      return read.contents;
    },
  }],
  async start(deps) {
    const config = GatewayConfig.parse(deps.config);
    const coordination = await openCoordinationStore(
      config.discovery.store,
      deps.store,
      deps.env,
    );
    // Announcements and discovery wait for it no longer than store_timeout_ms.
    const announced = storeWithDeadline(coordination.store, {
      ms: config.store_timeout_ms,
      whose: config.discovery.store === undefined
        ? "the daemon's"
        : "the coordination",
    });
    const instance = crypto.randomUUID();
    let secretKey: Promise<CryptoKey> | undefined;
    const gateway = new Gateway({
      config,
      store: deps.store,
      log: deps.log,
      peers: deps.peers,
      env: deps.env,
      secretKey: () =>
        secretKey ??= openSecrets({ env: deps.env, dataDir: deps.dataDir })
          .then((secrets) => secrets.dataKey),
      toolsChanged: deps.toolsChanged,
      resourcesChanged: deps.resourcesChanged,
      promptsChanged: deps.promptsChanged,
      own: deps.own,
      guard: deps.guard,
      discovery: {
        store: announced,
        instance,
        selfUrl: () => {
          const address = deps.address();
          return address === undefined ? undefined : `${address}/mcp`;
        },
      },
    });
    const announcer = config.discovery.announce
      ? new Announcer({
        store: announced,
        instance,
        interval_ms: config.discovery.interval_ms,
        log: deps.log,
        info: () => {
          const address = deps.address();
          if (address === undefined) return undefined;
          return {
            name: `agentd@${Deno.hostname()}`,
            url: `${address}/mcp`,
            version: gateway.version,
            servers: [...gateway.upstreams.keys()].sort(),
            // The built-in servers, each at <address>/mcp/<id> in `serve`.
            hosted: deps.peers.map((peer) => peer.id),
          };
        },
      })
      : undefined;
    try {
      await gateway.start();
    } catch (error) {
      await gateway.stop();
      await coordination.close();
      throw error;
    }
    announcer?.start();
    return {
      context: gateway,
      dynamicTools: gateway,
      dynamicResources: gateway,
      dynamicPrompts: gateway,
      health: () => gateway.health(),
      metrics: () => gateway.metrics(),
      admin: async (viewer) => adminSection(await gateway.adminView(viewer)),
      // Built-in servers keep state per outer session (a tab, results): tell them.
      sessionClosed(sessionId) {
        for (const peer of deps.peers) {
          peer.sessionClosed(forwardedSession(sessionId));
        }
      },
      async stop() {
        await announcer?.stop();
        await gateway.stop();
        await coordination.close();
      },
    };
  },
});
