// An in-process agentd for the /v1 tests: the real memory server and gateway
// on a MemoryStore, the real OpenAI and Anthropic providers pointed at the
// scripted model server, the agent service, its A2A layer and the HTTP app
// (`app.request()`).

import type { Hono } from "hono";
import type { z } from "zod";
import { A2AService } from "../../agents/a2a/mod.ts";
import { a2aMessagingTool } from "../../agents/a2a/tool.ts";
import { AgentsConfig } from "../../agents/config.ts";
import { a2aHostOf } from "../../agents/a2a_bridge.ts";
import { GatewayLink } from "../../agents/gateway_link.ts";
import {
  createModelResolver,
  ProvidersConfig,
} from "../../agents/providers/mod.ts";
import { AgentService } from "../../agents/service.ts";
import { readBaseConfig } from "../../platform/config.ts";
import { Client } from "../../platform/mcp_sdk.ts";
import { scoped, type Store } from "../../platform/store/mod.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { type AppEnv, createApp } from "../../routes/mod.ts";
import { startServers } from "../../cli/boot.ts";
import { offerToGateway } from "../../cli/agents.ts";
import type { HostedServer } from "../../tools/kit/host.ts";
import { gatewayServer } from "../../tools/gateway/mod.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import { peerOf } from "../../tools/kit/transport/peer.ts";
import { memoryServer } from "../../tools/memory/mod.ts";
import {
  capturedLog,
  type LogLine,
  readReply,
  type Reply,
} from "../helpers.ts";
import { type ModelServer, startModelServer } from "./model_server.ts";

export const MIB = 1024 * 1024;

export interface Stack {
  app: Hono<AppEnv>;
  service: AgentService;
  model: ModelServer;
  store: MemoryStore;
  hosts: HostedServer[];
  logs: LogLine[];
  /** A JSON request through `app.request()` as the operator unless `headers` has an authorization; `body` is sent as JSON unless a string. */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply>;
  /** An MCP client of the gateway, bound to `agent` when given. */
  gateway(agent?: string): Promise<Client>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A per-agent token the stack's app knows: requests with it act as agent "alice". */
export const ALICE_TOKEN = "alice-token-0123456789abcdef";
/** The stack's daemon token: `request()` sends it unless given an authorization header. */
export const OPERATOR_TOKEN = "operator-token-0123456789abcdef";

export async function startStack(options: {
  agents?: z.input<typeof AgentsConfig>;
  providers?: z.input<typeof ProvidersConfig>;
  /** Start without the memory server and gateway. */
  noServers?: boolean;
  /** The service's run lease interval (default LEASE_RENEW_MS). */
  leaseRenewMs?: number;
} = {}): Promise<Stack> {
  const { log, logs } = capturedLog("debug");
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-agents-" });
  const store = new MemoryStore();
  const model = await startModelServer();
  const hosts = options.noServers ? [] : await startServers(
    [memoryServer, gatewayServer],
    {
      store,
      log,
      settings: {
        base: readBaseConfig({}),
        values: {},
        origin: {},
        dataDir,
      },
      env: {},
    },
  );
  const gatewayHost = hosts.find((host) => host.id === "gateway");
  const agentsConfig = AgentsConfig.parse({
    default_model: "openai/test-model",
    ...options.agents,
  });
  const service = new AgentService({
    store: scoped(store, ["agents"]),
    gateway: new GatewayLink(gatewayHost && peerOf(gatewayHost)),
    models: createModelResolver({
      // No retries: a scripted failure is seen at once.
      config: ProvidersConfig.parse(
        options.providers ?? {
          openai: { api: "openai", max_retries: 0 },
          anthropic: { api: "anthropic", max_retries: 0 },
        },
      ),
      env: model.env,
      log,
      defaultProvider: agentsConfig.default_provider,
    }),
    config: agentsConfig,
    log,
    leaseRenewMs: options.leaseRenewMs,
  });
  await service.start();
  const a2a = new A2AService({
    host: a2aHostOf(service, scoped(store, ["a2a"])),
    log,
  });
  service.addLocalTool(a2aMessagingTool(a2a));
  await offerToGateway(gatewayHost, service);
  const app = createApp({
    hosts,
    endpoints: new Map(),
    layout: "daemon",
    bindHost: "127.0.0.1",
    allowedHosts: [],
    allowedOrigins: [],
    maxBodyBytes: MIB,
    token: OPERATOR_TOKEN,
    agentTokens: { alice: ALICE_TOKEN },
    agents: service,
    a2a,
    version: "0.0.0-test",
    startedAt: Date.now(),
    log,
  });
  const clients: Client[] = [];
  return {
    app,
    service,
    model,
    store,
    hosts,
    logs,
    async request(method, path, body, headers = {}) {
      const init: RequestInit = {
        method,
        headers: {
          host: "127.0.0.1:8765",
          authorization: `Bearer ${OPERATOR_TOKEN}`,
          ...headers,
        },
      };
      if (body !== undefined) {
        init.body = typeof body === "string" ? body : JSON.stringify(body);
        init.headers = { "content-type": "application/json", ...init.headers };
      }
      return await readReply(
        await app.request(`http://127.0.0.1:8765${path}`, init),
      );
    },
    async gateway(agent) {
      const host = hosts.find((candidate) => candidate.id === "gateway");
      if (!host) throw new Error("no gateway in this stack");
      const client = new Client({ name: "test", version: "1" });
      await client.connect(
        await connectInProcess(host, agent ? { agent } : {}),
      );
      clients.push(client);
      return client;
    },
    async [Symbol.asyncDispose]() {
      await a2a.close();
      await service.close(0);
      for (const client of clients) await client.close();
      for (const host of hosts) await host.stop(1000);
      await model.close();
      await store.close();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

/** The text of a tool result's first content block. */
export function resultText(result: unknown): string {
  const content = typeof result === "object" && result !== null
    ? Reflect.get(result, "content")
    : undefined;
  const first = Array.isArray(content) ? content[0] : undefined;
  const text = typeof first === "object" && first !== null
    ? Reflect.get(first, "text")
    : undefined;
  return typeof text === "string" ? text : "";
}

/** Parses a text/event-stream body into events. */
export function parseEvents(text: string): { event: string; data: unknown }[] {
  return text.split("\n\n").filter((block) => block.trim() !== "").map(
    (block) => {
      let event = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      return { event, data: JSON.parse(data) };
    },
  );
}

/** A second daemon's agent service on `store` (the root store, as the daemon has it). */
export async function startPeer(
  store: Store,
  options: { leaseRenewMs?: number; clock?: () => number } = {},
) {
  const { log, logs } = capturedLog("debug");
  const service = new AgentService({
    store: scoped(store, ["agents"]),
    gateway: new GatewayLink(undefined),
    models: createModelResolver({
      config: ProvidersConfig.parse({}),
      env: {},
      log,
    }),
    config: AgentsConfig.parse({}),
    log,
    ...options,
  });
  await service.start();
  return {
    service,
    logs,
    interrupted: () =>
      logs.filter((line) => line.event === "runs_interrupted").map((line) =>
        line.reasons
      ),
    async [Symbol.asyncDispose]() {
      await service.close(0);
    },
  };
}
