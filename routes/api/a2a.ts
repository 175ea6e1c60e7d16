// /v1/a2a: agent cards, agentd's A2A message envelopes and inboxes, and
// each agent's A2A JSON-RPC endpoint (protocol 1.0 and 0.3).
//
//   GET  /v1/a2a/{agent_url}/card                    agentd card; {agent_url} is a local
//                                                   agent's name or id, or a URL-encoded
//                                                   http(s) address of a remote agent
//   POST /v1/a2a/message                             agentd envelope → 200 response envelope
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
import type { CardPlace } from "../../agents/a2a/cards.ts";
import { handleJsonRpc } from "../../agents/a2a/jsonrpc.ts";
import type { RpcReply } from "../../agents/a2a/rpc.ts";
import type { A2AService } from "../../agents/a2a/mod.ts";
import { describeIssues } from "../../platform/validation.ts";
import { HttpError } from "../../platform/http_errors.ts";
import type { GuardVariables } from "../../platform/http_guards.ts";
import type { Caller } from "../../platform/identity.ts";
import type { JsonValue } from "../../platform/store/mod.ts";

type A2AEnv = { Variables: GuardVariables };

export const A2A_PATH = "/v1/a2a";

const inboxQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().min(1).optional(),
  order: z.enum(["asc", "desc"]).default("desc"),
});

export function a2aRoutes(a2a: A2AService): Hono<A2AEnv> {
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

  app.get("/:agent_url/card", async (c) =>
    c.json(
      await a2a.cards.agentd(
        c.req.param("agent_url"),
        placeOf(c, basePath(c)),
        c.req.raw.signal,
      ),
    ));

  app.get("/:agent/.well-known/agent-card.json", async (c) => {
    const agent = await a2a.cards.agent(c.req.param("agent"));
    return c.json(
      a2a.cards.forClient(
        agent,
        placeOf(c, basePath(c)),
        c.req.header("a2a-version"),
      ),
      200,
      { vary: "A2A-Version" },
    );
  });

  app.get("/:agent/messages", async (c) => {
    const agent = await a2a.cards.agent(c.req.param("agent"));
    const query = inboxQuery.safeParse(c.req.query());
    if (!query.success) {
      throw new HttpError(400, `Invalid query: ${describeIssues(query.error)}`);
    }
    return c.json(await a2a.envelopes.inbox(agent, query.data, callerOf(c)));
  });

  app.post("/:agent", async (c) => {
    const agent = await a2a.cards.agent(c.req.param("agent"));
    const reply = await handleJsonRpc(a2a, agent, {
      body: await c.req.text().catch(() => undefined),
      version: c.req.header("a2a-version"),
    }, callerOf(c));
    return rpcResponse(reply);
  });

  return app;
}

export interface WellKnownOptions {
  /** The agent (name or id) whose card the daemon's origin serves; default the first agent. */
  defaultAgent?: string;
  /** Where a2aRoutes are mounted; default /v1/a2a. */
  a2aPath?: string;
}

/** `/.well-known/agent-card.json` (mount at `/.well-known`): the default agent's A2A card. */
export function wellKnownRoutes(
  a2a: A2AService,
  options: WellKnownOptions = {},
): Hono<A2AEnv> {
  const app = new Hono<A2AEnv>();
  app.get("/agent-card.json", async (c) => {
    const agent = await a2a.cards.defaultAgent(options.defaultAgent);
    return c.json(
      a2a.cards.forClient(
        agent,
        placeOf(c, options.a2aPath ?? A2A_PATH),
        c.req.header("a2a-version"),
      ),
      200,
      { vary: "A2A-Version" },
    );
  });
  return app;
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

function placeOf(c: Context<A2AEnv>, a2aPath: string): CardPlace {
  return { origin: new URL(c.req.url).origin, a2aPath };
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
