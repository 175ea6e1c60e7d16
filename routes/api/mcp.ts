// MCP over streamable HTTP: `/mcp/<server>` in the daemon, `/mcp` when one
// server runs alone. Session and protocol handling live in tools/kit/transport/http_server.ts.

import { Hono } from "hono";
import type { GuardVariables } from "../../platform/http_guards.ts";
import { HttpError } from "../../platform/http_errors.ts";
import type { McpHttpEndpoint } from "../../tools/kit/transport/http_server.ts";

/** `/mcp/:server` for every enabled server, and the gateway's aggregate at `/mcp`. */
export function mcpRoutes(
  endpoints: ReadonlyMap<string, McpHttpEndpoint>,
): Hono<{ Variables: GuardVariables }> {
  const app = new Hono<{ Variables: GuardVariables }>();
  app.all("/", (c) => {
    const gateway = endpoints.get("gateway");
    if (!gateway) {
      throw new HttpError(
        404,
        "The gateway is not enabled here (see --servers); each server is at /mcp/<server>",
        { enabled: [...endpoints.keys()] },
      );
    }
    return gateway.handle(c.req.raw, {
      caller: c.get("caller"),
      authorization: c.req.header("authorization"),
    });
  });
  app.all("/:server", (c) => {
    const id = c.req.param("server");
    const endpoint = endpoints.get(id);
    if (!endpoint) {
      const known = [...endpoints.keys()];
      throw new HttpError(
        404,
        `No MCP server "${id}" here. Enabled: ${
          known.length ? known.join(", ") : "none"
        }`,
        { enabled: known },
      );
    }
    return endpoint.handle(c.req.raw, {
      caller: c.get("caller"),
      authorization: c.req.header("authorization"),
    });
  });
  return app;
}

/** `/mcp` for the single server of `agentd mcp <server> --port N`. */
export function singleMcpRoute(
  endpoint: McpHttpEndpoint,
): Hono<{ Variables: GuardVariables }> {
  const app = new Hono<{ Variables: GuardVariables }>();
  app.all("/", (c) =>
    endpoint.handle(c.req.raw, {
      caller: c.get("caller"),
      authorization: c.req.header("authorization"),
    }));
  return app;
}
