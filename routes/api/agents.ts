// /v1/agents: create, list, get, delete agents and send them messages.
// Handlers translate HTTP to calls on the agent service; errors are thrown.

import { Hono } from "hono";
import type { AgentService } from "../../agents/service.ts";
import { AgentCreate, SendRequest } from "../../agents/schemas.ts";
import { HttpError } from "../../platform/http_errors.ts";
import type { GuardVariables } from "../../platform/http_guards.ts";
import type { Logger } from "../../platform/log.ts";
import {
  asHttpError,
  eventStream,
  jsonBody,
  listQueryOf,
  operatorOnly,
  pageResponse,
} from "./v1_http.ts";

type Env = { Variables: GuardVariables };

export function agentRoutes(
  service: AgentService,
  log: Logger,
): Hono<Env> {
  const app = new Hono<Env>();
  app.post("/", operatorOnly, async (c) => {
    const input = await jsonBody(c, AgentCreate);
    return c.json(await service.createAgent(input), 201);
  });
  app.get("/", async (c) => {
    const { limit, cursor } = listQueryOf(c);
    const actor = c.get("caller")?.agent;
    return pageResponse(
      c,
      await service.listAgents({ limit, cursor }, { actor }),
    );
  });
  app.get("/:ref", async (c) => {
    const actor = c.get("caller")?.agent;
    return c.json(await service.getAgent(c.req.param("ref"), { actor }));
  });
  app.delete("/:ref", operatorOnly, async (c) => {
    await service.deleteAgent(c.req.param("ref"));
    return c.body(null, 204);
  });
  app.post("/:ref/send", async (c) => {
    const ref = c.req.param("ref");
    const input = await jsonBody(c, SendRequest);
    const actor = c.get("caller")?.agent;
    if (!input.stream) {
      return c.json(
        await service.send(ref, input, { signal: c.req.raw.signal, actor }),
      );
    }
    return await eventStream(
      (emit, signal) =>
        service.send(ref, input, { signal, onEvent: emit, actor }),
      {
        signal: c.req.raw.signal,
        describe: (error) => {
          const http = asHttpError(error);
          if (http) return http;
          log.error("stream_failed", { path: c.req.path, error });
          return new HttpError(500, "Internal error; see the daemon log");
        },
      },
    );
  });
  return app;
}
