// A fake A2AHost whose agents' turns are small deterministic functions,
// over a real store, and the A2A routes mounted as the daemon mounts them;
// and @a2a-js/sdk clients (v1.0 and 0.3) of an agent served anywhere.

import assert from "node:assert/strict";
import { type Message, SendMessageRequest, type Task } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { parseLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type {
  A2AAgent,
  A2AHost,
  TurnInput,
  TurnOutput,
} from "../../../agents/a2a/host.ts";
import { A2AService } from "../../../agents/a2a/mod.ts";
import { ProviderError } from "../../../agents/model.ts";
import { errorResponse } from "../../../platform/http_errors.ts";
import { asHttpError } from "../../../routes/api/v1_http.ts";
import {
  callerGuard,
  type GuardVariables,
} from "../../../platform/http_guards.ts";
import { createLogger } from "../../../platform/log.ts";
import type { Store } from "../../../platform/store/mod.ts";
import { a2aRoutes, wellKnownRoutes } from "../../../routes/api/a2a.ts";

const CREATED = "2026-01-01T00:00:00.000Z";

function agent(id: string, name: string, description: string): A2AAgent {
  return {
    id,
    name,
    description,
    model: `fake/${name}`,
    tools: name === "echo"
      ? ["memory__store_memory", "browser-automation"]
      : [],
    toolServers: name === "echo" ? { "memory__store_memory": "memory" } : {},
    created_at: CREATED,
  };
}

/**
 * echo: answers the text upper-cased, streamed three characters at a time.
 * slow: streams "thinking…", then waits until aborted (or `release()`).
 * down: its provider is unreachable (ProviderError 503).
 * broken: fails its turn with a plain error.
 */
export const AGENTS: readonly A2AAgent[] = [
  agent("agt_echo", "echo", "Repeats what it hears, louder"),
  agent("agt_slow", "slow", "Takes its time"),
  agent("agt_down", "down", "Its provider is down"),
  agent("agt_broken", "broken", ""),
];

export interface FakeHost extends A2AHost {
  /** Every turn's input, in order. */
  turns: { agent: string; input: TurnInput }[];
  /** Ends the slow agent's waiting turns with `content`. */
  release(content: string): void;
  /** Resolves when the slow agent has a turn waiting. */
  slowStarted(): Promise<void>;
}

export function fakeHost(
  store: Store,
  agents: readonly A2AAgent[] = AGENTS,
): FakeHost {
  const turns: FakeHost["turns"] = [];
  let gate = Promise.withResolvers<string>();
  let started = Promise.withResolvers<void>();
  return {
    store,
    turns,
    findAgent: (ref) =>
      Promise.resolve(agents.find((a) => a.name === ref || a.id === ref)),
    listAgents: () => Promise.resolve([...agents]),
    release(content) {
      gate.resolve(content);
      gate = Promise.withResolvers<string>();
    },
    slowStarted: () => started.promise,
    async runTurn(agent, input, options): Promise<TurnOutput> {
      turns.push({ agent: agent.name, input });
      switch (agent.name) {
        case "echo": {
          const content = input.text.toUpperCase();
          for (let i = 0; i < content.length; i += 3) {
            options.onText?.(content.slice(i, i + 3));
          }
          return { content, stop_reason: "end_turn" };
        }
        case "slow": {
          options.onText?.("thinking…");
          started.resolve();
          started = Promise.withResolvers<void>();
          const signal = options.signal;
          const content = await new Promise<string>((resolve, reject) => {
            if (signal?.aborted) reject(signal.reason);
            signal?.addEventListener("abort", () => reject(signal.reason), {
              once: true,
            });
            void gate.promise.then(resolve);
          });
          return { content, stop_reason: "end_turn" };
        }
        case "down":
          throw new ProviderError(
            "Cannot reach provider fake at http://127.0.0.1:9: connection refused",
            "fake",
            "unavailable",
          );
        default:
          throw new Error("Turn bound hit: 8 model calls without an answer");
      }
    },
  };
}

export const silentLog = createLogger({ sink: () => {} });

export interface Fixture {
  host: FakeHost;
  service: A2AService;
  app: Hono<{ Variables: GuardVariables }>;
}

/** The operator's token of an `a2aApp` with `agentTokens`. */
export const FIXTURE_OPERATOR_TOKEN = "operator-token-0123456789abcdef";

/** The routes as the daemon mounts them, with its error shape; `agentTokens` turns on the caller guard. */
export function a2aApp(
  store: Store,
  options: {
    fetchFn?: typeof fetch;
    agentTokens?: Record<string, string>;
    agents?: readonly A2AAgent[];
    cardTimeoutMs?: number;
  } = {},
): Fixture {
  const host = fakeHost(store, options.agents);
  const service = new A2AService({
    host,
    log: silentLog,
    fetchFn: options.fetchFn,
    remote: { cardTimeoutMs: options.cardTimeoutMs ?? 2_000 },
  });
  const app = new Hono<{ Variables: GuardVariables }>();
  if (options.agentTokens) {
    // As in the daemon: agent tokens come with an operator token.
    app.use(
      callerGuard({
        token: FIXTURE_OPERATOR_TOKEN,
        agentTokens: options.agentTokens,
      }),
    );
  }
  app.route(
    "/v1/a2a",
    a2aRoutes(service),
  );
  app.route("/.well-known", wellKnownRoutes(service));
  app.notFound((c) =>
    errorResponse(404, `Nothing at ${c.req.method} ${c.req.path}`)
  );
  app.onError((error) => {
    // The daemon's one mapping of runtime errors to HTTP (routes/mod.ts uses it too).
    const http = asHttpError(error);
    if (http) {
      return errorResponse(http.status, http.message, {
        details: http.details,
        code: http.code,
      });
    }
    if (error instanceof HTTPException) return error.getResponse();
    return errorResponse(500, `Internal error: ${String(error)}`);
  });
  return { host, service, app };
}

export interface Served {
  url: string;
  close(): Promise<void>;
}

/** Serves `handler` on a free loopback port. */
export function serve(
  handler: (request: Request) => Response | Promise<Response>,
): Served {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    handler,
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

export function post(body: unknown, headers: Record<string, string> = {}) {
  return {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  };
}

/** Every key in the store (to prove that nothing was written). */
export async function storedKeys(store: Store): Promise<string[]> {
  const page = await store.list([], { limit: 1000 });
  return page.entries.map((e) => JSON.stringify(e.key));
}

/** Reads the `data:` events of an SSE response as JSON. */
export async function sseEvents(response: Response): Promise<unknown[]> {
  const text = await response.text();
  return text.split("\n\n").filter((block) => block.startsWith("data: ")).map(
    (block) => JSON.parse(block.slice("data: ".length)),
  );
}

/** The SDK's v1.0 client, discovering the agent from its well-known card. */
export function v1Client(
  server: { url: string },
  agent: string,
): Promise<Client> {
  return new ClientFactory().createFromUrl(
    `${server.url}/v1/a2a/${agent}/.well-known/agent-card.json`,
    "",
  );
}

/** The SDK's 0.3 client: the 0.3 card (as served without A2A-Version, read as a 0.3 reader reads it) and the compat transport. */
export async function v03Client(
  server: { url: string },
  agent: string,
): Promise<Client> {
  const res = await fetch(
    `${server.url}/v1/a2a/${agent}/.well-known/agent-card.json`,
  );
  const { supportedInterfaces: _, ...card } = await res.json();
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory({ legacyCompat: { enabled: true } }),
      ],
    }),
  );
  return await factory.createFromAgentCard(parseLegacyAgentCard(card));
}

/** A user message of `text` for the SDK's sendMessage(Stream). */
export function sendRequest(
  text: string,
  options: { returnImmediately?: boolean; contextId?: string } = {},
): SendMessageRequest {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: crypto.randomUUID(),
      role: "ROLE_USER",
      parts: [{ text }],
      contextId: options.contextId,
    },
    configuration: { returnImmediately: options.returnImmediately ?? false },
  });
}

export function asTask(result: Message | Task): Task {
  assert.ok(!("messageId" in result), "the agent answers with a task");
  return result;
}

/** The text parts of a task's artifacts, joined. */
export function artifactText(task: Task): string {
  return task.artifacts.flatMap((a) =>
    a.parts.flatMap((p) => p.content?.$case === "text" ? [p.content.value] : [])
  ).join("");
}
