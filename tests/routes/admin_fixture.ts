// A fixed /admin view for the route and browser tests: a healthy built-in,
// an unhealthy HTTP upstream whose error carries markup, a stdio one still
// connecting, and a tool whose gateway name was shortened.

import { Hono } from "hono";
import type { GuardVariables } from "../../platform/http_guards.ts";
import { type AdminPage, adminRoutes } from "../../web/admin.ts";
import {
  adminSection,
  type AdminView,
} from "../../tools/gateway/admin_view.ts";

export const HOSTILE_ERROR =
  `Cannot reach upstream "everything": <script>alert(1)</script> & more`;

export const SHORTENED_NAME =
  "everything__a_really_long_tool_name_that_goes_on_and_on_and_o_1f3a";

export function adminView(): AdminView {
  return {
    generated_at: "2026-03-01T12:00:05.000Z",
    version: "9.8.7",
    health_interval_ms: 10_000,
    balance: "least_in_flight",
    servers: [
      {
        name: "memory",
        group: "memory",
        source: "builtin",
        transport: "in-process",
        target: "in-process",
        credentials: false,
        state: "healthy",
        since: "2026-03-01T11:00:00.000Z",
        last_check: "2026-03-01T12:00:00.000Z",
        latency_ms: 2,
        last_error: null,
        calls: 1234,
        errors: 0,
        error_rate: 0,
        in_flight: 1,
        tools: 2,
        pid: null,
        restarts: 0,
        reroutes: 0,
      },
      {
        name: "everything",
        group: "everything",
        source: "config",
        transport: "http",
        target: "http://127.0.0.1:3001/mcp",
        credentials: true,
        state: "unhealthy",
        since: "2026-03-01T11:59:30.000Z",
        last_check: "2026-03-01T12:00:00.000Z",
        latency_ms: null,
        last_error: HOSTILE_ERROR,
        calls: 40,
        errors: 10,
        error_rate: 0.25,
        in_flight: 0,
        tools: 2,
        pid: null,
        restarts: 0,
        reroutes: 7,
      },
      {
        name: "files-2",
        group: "files",
        source: "registered",
        transport: "stdio",
        target: "npx -y @modelcontextprotocol/server-filesystem /tmp",
        credentials: false,
        state: "connecting",
        since: "2026-03-01T12:00:04.000Z",
        last_check: null,
        latency_ms: null,
        last_error: null,
        calls: 0,
        errors: 0,
        error_rate: 0,
        in_flight: 0,
        tools: 0,
        pid: 4242,
        restarts: 3,
        reroutes: 0,
      },
    ],
    tools: [
      {
        name: "memory__store_memory",
        group: "memory",
        tool: "store_memory",
        shortened: false,
        description: "Store a value under a key in a namespace.",
      },
      {
        name: "everything__echo",
        group: "everything",
        tool: "echo",
        shortened: false,
        description: `Echoes <b>"text"</b> & 'quotes' back.`,
      },
      {
        name: SHORTENED_NAME,
        group: "everything",
        tool:
          "a_really_long_tool_name_that_goes_on_and_on_and_on_and_on_past_the_limit",
        shortened: true,
        description: "A tool whose gateway name had to be shortened.",
      },
    ],
  };
}

/** The page of a daemon whose only section is the gateway's, showing `view`. */
export function adminPageOf(view: AdminView): AdminPage {
  return {
    generated_at: view.generated_at,
    version: view.version,
    sections: [{ server: "gateway", ...adminSection(view) }],
  };
}

/** An app with the admin page at /admin, the way routes/mod.ts mounts it. */
export function adminApp(
  view: () => Promise<AdminView> = () => Promise.resolve(adminView()),
  options: { refreshMs?: number } = {},
): Hono<{ Variables: GuardVariables }> {
  return new Hono<{ Variables: GuardVariables }>().route(
    "/admin",
    adminRoutes(async () => adminPageOf(await view()), options),
  );
}
