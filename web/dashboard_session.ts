// Logging the dashboard in without a token in any URL: a caller holding the
// daemon token asks for a one-time code; the browser or window opens
// /dashboard/login?code=…, which trades it for an HttpOnly session cookie.

import { getCookie } from "hono/cookie";
import { errorResponse } from "../platform/http_errors.ts";
import { type Check, sameOrigin } from "../platform/http_guards.ts";

export const SESSION_COOKIE = "agentd_session";
export const LOGIN_PATH = "/dashboard/login";
const CODE_TTL_MS = 60_000;
const SESSION_TTL_MS = 12 * 60 * 60_000;

function randomId(): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(24)),
    (byte) => byte.toString(16).padStart(2, "0"),
  ).join("");
}

/** One-time codes and the sessions they opened, in this daemon's memory. */
export class DashboardSessions {
  readonly #codes = new Map<string, number>();
  readonly #sessions = new Map<string, number>();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  issueCode(): { code: string; expires_in_s: number } {
    this.#sweep();
    const code = randomId();
    this.#codes.set(code, this.#clock() + CODE_TTL_MS);
    return { code, expires_in_s: CODE_TTL_MS / 1000 };
  }

  /** A new session id for a valid unused code; the code is spent either way. */
  redeem(code: string): string | undefined {
    const expires = this.#codes.get(code);
    this.#codes.delete(code);
    if (expires === undefined || expires < this.#clock()) return undefined;
    const session = randomId();
    this.#sessions.set(session, this.#clock() + SESSION_TTL_MS);
    return session;
  }

  valid(session: string | undefined): boolean {
    if (session === undefined) return false;
    const expires = this.#sessions.get(session);
    return expires !== undefined && expires >= this.#clock();
  }

  end(session: string): void {
    this.#sessions.delete(session);
  }

  #sweep(): void {
    const now = this.#clock();
    for (const [key, expires] of this.#codes) {
      if (expires < now) this.#codes.delete(key);
    }
    for (const [key, expires] of this.#sessions) {
      if (expires < now) this.#sessions.delete(key);
    }
  }
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Runs `tokenCheck` unless the request is the login itself or carries a live
 * session cookie and no Authorization header. A cookie-authenticated request
 * that changes something must come from the daemon's own origin (no CSRF).
 */
export function sessionOrToken(
  sessions: DashboardSessions,
  tokenCheck: Check,
): Check {
  return (c) => {
    if (c.req.path === LOGIN_PATH && c.req.method === "GET") {
      c.set("caller", {});
      return undefined;
    }
    if (c.req.header("authorization") !== undefined) return tokenCheck(c);
    if (
      c.req.header("cookie") === undefined ||
      !sessions.valid(getCookie(c, SESSION_COOKIE))
    ) {
      return tokenCheck(c);
    }
    if (!SAFE_METHODS.has(c.req.method) && !sameOrigin(c.req.raw)) {
      return errorResponse(
        403,
        "A dashboard session may change things only from the dashboard's own page (Origin missing or different)",
      );
    }
    c.set("caller", {});
    return undefined;
  };
}
