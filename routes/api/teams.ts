// /v1/teams and /v1/runs: create, list, get, delete teams; execute a task on
// a team (the reply is the finished run); read and cancel runs.

import { Hono } from "hono";
import type { AgentService } from "../../agents/service.ts";
import { RunListQuery, TeamCreate, TeamExecute } from "../../agents/schemas.ts";
import type { GuardVariables } from "../../platform/http_guards.ts";
import {
  jsonBody,
  listQueryOf,
  operatorOnly,
  pageResponse,
  queryOf,
} from "./v1_http.ts";

type Env = { Variables: GuardVariables };

export function teamRoutes(service: AgentService): Hono<Env> {
  const app = new Hono<Env>();
  app.post("/", operatorOnly, async (c) => {
    const input = await jsonBody(c, TeamCreate);
    return c.json(await service.createTeam(input), 201);
  });
  app.get("/", async (c) => {
    const { limit, cursor } = listQueryOf(c);
    return pageResponse(c, await service.listTeams({ limit, cursor }));
  });
  app.get(
    "/:ref",
    async (c) => c.json(await service.getTeam(c.req.param("ref"))),
  );
  app.delete("/:ref", operatorOnly, async (c) => {
    await service.deleteTeam(c.req.param("ref"));
    return c.body(null, 204);
  });
  app.post("/:ref/execute", async (c) => {
    const ref = c.req.param("ref");
    const input = await jsonBody(c, TeamExecute);
    return c.json(
      await service.execute(ref, input, { actor: c.get("caller")?.agent }),
    );
  });
  return app;
}

export function runRoutes(service: AgentService): Hono<Env> {
  const app = new Hono<Env>();
  app.get("/", async (c) => {
    const { limit, cursor, team_id } = queryOf(c, RunListQuery);
    return c.json(
      await service.listRuns({ limit, cursor }, team_id, {
        actor: c.get("caller")?.agent,
      }),
    );
  });
  app.get("/:id", async (c) =>
    c.json(
      await service.getRun(c.req.param("id"), {
        actor: c.get("caller")?.agent,
      }),
    ));
  app.post("/:id/cancel", async (c) => {
    const { run, settled } = await service.cancelRun(c.req.param("id"), {
      actor: c.get("caller")?.agent,
    });
    return c.json(run, settled ? 200 : 202);
  });
  return app;
}
