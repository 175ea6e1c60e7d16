// /dashboard: the page people open (in `agentd ui`'s window or any browser)
// and its login. The page is a shell; its script reads the daemon's own API
// (/health, /admin, /v1, /mcp/memory) with the session cookie and refreshes
// each panel in place.

import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { encodeBase64 } from "../platform/base64.ts";
import { errorResponse } from "../platform/http_errors.ts";
import type { GuardVariables } from "../platform/http_guards.ts";
import { renderDashboard } from "./dashboard_page.ts";
import {
  type DashboardSessions,
  LOGIN_PATH,
  SESSION_COOKIE,
} from "./dashboard_session.ts";

type Env = { Variables: GuardVariables };

const NO_STORE = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

export interface DashboardOptions {
  sessions: DashboardSessions;
  version: string;
  /** How often the panels refresh. */
  refreshMs?: number;
}

export function dashboardRoutes(options: DashboardOptions): Hono<Env> {
  const { sessions } = options;
  const app = new Hono<Env>();
  app.get("/", (c) => {
    const nonce = encodeBase64(crypto.getRandomValues(new Uint8Array(16)));
    return c.html(
      renderDashboard({
        nonce,
        version: options.version,
        refreshMs: options.refreshMs ?? 3_000,
      }),
      200,
      {
        ...NO_STORE,
        "content-security-policy":
          `default-src 'none'; style-src 'nonce-${nonce}'; ` +
          `script-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; ` +
          `form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
        "x-frame-options": "DENY",
      },
    );
  });
  // Only the daemon's operator (not an agent's token) may open a session.
  app.post("/login-codes", (c) => {
    if (c.get("caller").agent !== undefined) {
      return errorResponse(
        403,
        "Only the daemon token can open a dashboard session, not an agent's token",
      );
    }
    const issued = sessions.issueCode();
    return c.json(
      { ...issued, login_path: `${LOGIN_PATH}?code=${issued.code}` },
      201,
      NO_STORE,
    );
  });
  app.get("/login", (c) => {
    const code = c.req.query("code") ?? "";
    const session = sessions.redeem(code);
    if (session === undefined) {
      return errorResponse(
        401,
        "This login code is unknown, used or expired (codes work once, for 60 s). Run `agentd ui` again.",
        { headers: NO_STORE },
      );
    }
    setCookie(c, SESSION_COOKIE, session, {
      path: "/",
      httpOnly: true,
      sameSite: "Strict",
      secure: new URL(c.req.url).protocol === "https:",
    });
    return c.redirect("/dashboard", 303);
  });
  app.post("/logout", (c) => {
    const session = getCookie(c, SESSION_COOKIE);
    if (session !== undefined) sessions.end(session);
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.body(null, 204, NO_STORE);
  });
  return app;
}
