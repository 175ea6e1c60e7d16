// /v1/a2a: agent cards, the seed's A2A message envelopes and inboxes, and
// each agent's A2A JSON-RPC endpoint (protocol 1.0 and 0.3).
//
//   GET  /v1/a2a/{agent_url}/card                    seed card; {agent_url} is a local
//                                                   agent's name or id, or a URL-encoded
//                                                   http(s) address of a remote agent
//   POST /v1/a2a/message                             seed envelope → 200 response envelope
//                                                   (request) or 202 {id, status}
//   GET  /v1/a2a/{agent}/messages?limit&cursor&order inbox → {data, next_cursor}
//   POST /v1/a2a/{agent}                             A2A JSON-RPC (an agent named "message"
//                                                   is reached here by its id)
//   GET  /v1/a2a/{agent}/.well-known/agent-card.json A2A card (v1.0 when the client sends
//                                                   A2A-Version: 1.x, else 0.3 with v1.0
//                                                   interfaces embedded)
//   GET  /.well-known/agent-card.json                the same for the default agent

import { type Context, Hono } from "hono";
import { basePath } from "hono/route";
import { z } from "zod";
import { a2aCard, legacyCard, seedCard } from "../agents/a2a/card.ts";
import {
  isRemoteAddress,
  RemoteAgentError,
  RemoteAgentForbidden,
} from "../agents/a2a/client.ts";
import type { A2AAgent, A2AHost } from "../agents/a2a/host.ts";
import { handleJsonRpc } from "../agents/a2a/jsonrpc.ts";
import type { RpcReply } from "../agents/a2a/rpc.ts";
import { A2AService } from "../agents/a2a/mod.ts";
import { describeIssues } from "../platform/validation.ts";
import { HttpError } from "../platform/http_errors.ts";
import type { GuardVariables } from "../platform/http_guards.ts";
import type { Caller } from "../platform/identity.ts";
import type { Logger } from "../platform/log.ts";
import type { JsonValue } from "../platform/store/mod.ts";

type A2AEnv = { Variables: GuardVariables };

export const A2A_PATH = "/v1/a2a";

export interface A2ARoutesOptions {
  host: A2AHost;
  log: Logger;
  fetchFn?: typeof fetch;
  /** One service shared with the agents' a2a tool (and closed at shutdown); built from host, log and fetchFn when omitted. */
  service?: A2AService;
}

const inboxQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().min(1).optional(),
  order: z.enum(["asc", "desc"]).default("desc"),
});

export function a2aRoutes(options: A2ARoutesOptions): Hono<A2AEnv> {
  const a2a = options.service ?? new A2AService(options);
  const app = new Hono<A2AEnv>();

  app.post("/message", async (c) => {
    const body = await readJson(c.req.raw);
    const result = await a2a.envelopes.post(body, {
      caller: callerOf(c),
      signal: c.req.raw.signal,
    });
    return "answered" in result
      ? c.json(result.answered)
      : c.json(result.accepted, 202);
  });

  app.get("/:agent_url/card", async (c) => {
    const ref = c.req.param("agent_url");
    if (isRemoteAddress(ref)) {
      try {
        const card = await a2a.remote.card(ref, c.req.raw.signal);
        return c.json(card.seed);
      } catch (error) {
        if (error instanceof RemoteAgentForbidden) {
          throw new HttpError(403, error.message, { address: ref });
        }
        if (error instanceof RemoteAgentError) {
          throw new HttpError(502, error.message, {
            address: ref,
            reason: error.reason,
          });
        }
        throw error;
      }
    }
    const agent = await findAgent(options.host, ref);
    const endpoint = `${originOf(c)}${basePath(c)}/${
      encodeURIComponent(agent.name)
    }`;
    return c.json(
      seedCard(a2aCard(agent, { endpoint, baseUrl: originOf(c) })),
    );
  });

  app.get("/:agent/.well-known/agent-card.json", async (c) => {
    const agent = await findAgent(options.host, c.req.param("agent"));
    return cardResponse(c, agent, basePath(c));
  });

  app.get("/:agent/messages", async (c) => {
    const agent = await findAgent(options.host, c.req.param("agent"));
    const bound = callerOf(c).agent;
    if (bound !== undefined && bound !== agent.name) {
      throw new HttpError(
        403,
        `This token belongs to agent "${bound}"; it reads only that agent's messages`,
      );
    }
    const query = inboxQuery.safeParse(c.req.query());
    if (!query.success) {
      throw new HttpError(400, `Invalid query: ${describeIssues(query.error)}`);
    }
    return c.json(await a2a.envelopes.inbox(agent, query.data));
  });

  app.post("/:agent", async (c) => {
    const agent = await findAgent(options.host, c.req.param("agent"));
    const reply = await handleJsonRpc(a2a, agent, {
      body: await c.req.text().catch(() => undefined),
      version: c.req.header("a2a-version"),
    }, callerOf(c));
    return rpcResponse(reply);
  });

  return app;
}

export interface WellKnownOptions {
  host: A2AHost;
  /** The agent (name or id) whose card the daemon's origin serves; default the first agent. */
  defaultAgent?: string;
  /** Where a2aRoutes are mounted; default /v1/a2a. */
  a2aPath?: string;
}

/** `/.well-known/agent-card.json` (mount at `/.well-known`): the default agent's A2A card. */
export function wellKnownRoutes(options: WellKnownOptions): Hono<A2AEnv> {
  const app = new Hono<A2AEnv>();
  app.get("/agent-card.json", async (c) => {
    const agent = options.defaultAgent
      ? await findAgent(options.host, options.defaultAgent)
      : (await options.host.listAgents())[0];
    if (!agent) {
      throw new HttpError(
        404,
        "No agents here yet: create one with POST /v1/agents",
      );
    }
    return cardResponse(c, agent, options.a2aPath ?? A2A_PATH);
  });
  return app;
}

/** The card for the client's protocol version: v1.0 for `A2A-Version: 1.x`, else 0.3 (v1.0 interfaces embedded). */
function cardResponse(
  c: Context<A2AEnv>,
  agent: A2AAgent,
  a2aPath: string,
): Response {
  const baseUrl = originOf(c);
  const endpoint = `${baseUrl}${a2aPath}/${encodeURIComponent(agent.name)}`;
  const card = a2aCard(agent, { endpoint, baseUrl });
  const version = c.req.header("a2a-version")?.trim() ?? "";
  const v1 = /^1(\.|$)/.test(version);
  return c.json(v1 ? card : legacyCard(card, endpoint), 200, {
    vary: "A2A-Version",
  });
}

/**
 * A JSON-RPC reply over HTTP: one JSON body (errors too, with 200, as the A2A
 * SDKs expect), or server-sent events, one `data:` line per message.
 */
function rpcResponse(reply: RpcReply): Response {
  if ("message" in reply) return Response.json(reply.message);
  const encoder = new TextEncoder();
  const events = new TransformStream<JsonValue, Uint8Array>({
    transform(message, controller) {
      controller.enqueue(
        encoder.encode(`data: ${JSON.stringify(message)}\n\n`),
      );
    },
  });
  return new Response(reply.stream.pipeThrough(events), {
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}

async function findAgent(host: A2AHost, ref: string): Promise<A2AAgent> {
  const agent = await host.findAgent(ref);
  if (!agent) {
    throw new HttpError(404, `No agent "${ref}" here (name or id)`);
  }
  return agent;
}

function originOf(c: Context<A2AEnv>): string {
  return new URL(c.req.url).origin;
}

function callerOf(c: Context<A2AEnv>): Caller {
  // Unset when the app runs without the guards (tests, embedding).
  const caller: Caller | undefined = c.get("caller");
  return caller ?? {};
}

async function readJson(request: Request): Promise<unknown> {
  const type = request.headers.get("content-type");
  if (type !== null && !/\bjson\b/i.test(type)) {
    throw new HttpError(
      415,
      `Content-Type must be application/json, got "${type}"`,
    );
  }
  const text = await request.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "The request body is not valid JSON");
  }
}
