// /admin/policy: the operator's side of the tool-call policy: read and replace the policy,
// answer pending approvals, read or export the audit trail. Operator only:
// an agent token (or agent JWT) is refused, whatever it asks.

import { Hono } from "hono";
import type { Context } from "hono";
import { errorResponse } from "../../platform/http_errors.ts";
import type { GuardVariables } from "../../platform/http_guards.ts";
import type { Guard } from "../../tools/kit/policy/guard.ts";
import { ToolError } from "../../tools/kit/mod.ts";

type PolicyEnv = { Variables: GuardVariables };

export function policyRoutes(guard: Guard): Hono<PolicyEnv> {
  const app = new Hono<PolicyEnv>();
  app.use(async (c, next) => {
    const agent = c.get("caller").agent;
    if (agent !== undefined) {
      return errorResponse(
        403,
        `Policy, approvals and audit are the operator's: agent "${agent}" may not use them`,
      );
    }
    await next();
  });

  app.get("/", (c) => c.json({ policy: guard.policy }));
  app.put("/", async (c) => {
    const body = await readJson(c);
    if (body === undefined) {
      return errorResponse(400, "Body must be a JSON policy object");
    }
    try {
      return c.json({ policy: guard.setPolicy(body) });
    } catch (error) {
      if (error instanceof ToolError) return errorResponse(400, error.message);
      throw error;
    }
  });

  app.get("/approvals", (c) => c.json({ approvals: guard.approvals() }));
  for (const verb of ["approve", "deny"] as const) {
    app.post(`/approvals/:id/${verb}`, async (c) => {
      const body = await readJson(c) ?? {};
      const scope = typeof body === "object" && body !== null &&
          "scope" in body
        ? body.scope
        : "once";
      if (scope !== "once" && scope !== "session") {
        return errorResponse(400, 'scope must be "once" or "session"');
      }
      const id = c.req.param("id");
      const by = `operator (${c.req.header("x-agentd-client") ?? "http"})`;
      if (!guard.decide(id, verb === "approve", by, scope)) {
        return errorResponse(
          404,
          `No pending approval "${id}" (it may have been answered or timed out)`,
        );
      }
      return c.json({
        id,
        decision: verb === "approve" ? "approved" : "denied",
        scope,
      });
    });
  }

  app.get("/audit", async (c) => {
    const limit = c.req.query("limit");
    const parsedLimit = limit === undefined ? undefined : Number(limit);
    if (
      parsedLimit !== undefined &&
      (!Number.isInteger(parsedLimit) || parsedLimit < 1)
    ) {
      return errorResponse(400, "limit must be a positive integer");
    }
    const records = await guard.audit.query({
      server: c.req.query("server"),
      tool: c.req.query("tool"),
      caller: c.req.query("caller"),
      since: c.req.query("since"),
      limit: parsedLimit,
    });
    if (c.req.query("format") === "jsonl") {
      return c.body(
        records.map((record) => JSON.stringify(record) + "\n").join(""),
        200,
        { "content-type": "application/x-ndjson" },
      );
    }
    return c.json({ records });
  });
  return app;
}

async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
