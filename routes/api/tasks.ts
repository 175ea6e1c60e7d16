// /admin/tasks: the MCP tasks of this daemon's servers (tools/kit/tasks.ts),
// newest first, as the caller may see them: the operator every task, an
// agent token its own only. The dashboard's task list reads it.

import { Hono } from "hono";
import type { GuardVariables } from "../../platform/http_guards.ts";
import type { Caller } from "../../platform/identity.ts";
import type { TaskBoard } from "../../tools/kit/tasks.ts";

type TasksEnv = { Variables: GuardVariables };

export function taskRoutes(board: TaskBoard): Hono<TasksEnv> {
  const app = new Hono<TasksEnv>();
  app.get("/", async (c) => {
    // Unset when the app runs without the caller guard (tests): the operator's view.
    const caller: Caller | undefined = c.get("caller");
    return c.json({ tasks: await board.rows(caller ?? {}) });
  });
  return app;
}
