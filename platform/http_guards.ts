// Guards every HTTP request passes before routing: Host and Origin checks
// against DNS rebinding, a body size limit and the bearer token.

import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errorResponse } from "./http_errors.ts";
import {
  type Caller,
  type Credentials,
  resolveCaller,
  unauthenticatedIsOperator,
} from "./identity.ts";
import { isLoopback, isWildcard } from "./hosts.ts";

export { isLoopback, isWildcard };

/** The hostname of a Host header (`example.com:8765` → `example.com`, `[::1]:80` → `[::1]`). */
function hostnameOf(hostHeader: string): string | undefined {
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * A configured name or address in the form `hostnameOf` gives a Host header,
 * so they compare equal: an IPv6 address gets its brackets and canonical
 * form (`FD00:0::1` → `[fd00::1]`); names and IPv4 are only lowercased.
 */
function normalizedName(name: string): string {
  const lower = name.toLowerCase();
  if (lower.split(":").length <= 2) return lower;
  return hostnameOf(lower.startsWith("[") ? lower : `[${lower}]`) ?? lower;
}

/** Host headers whose verdict `hostCheck` keeps. */
const MAX_VERDICTS = 64;

export interface HostGuardOptions {
  /** The address the daemon is bound to. */
  bindHost: string;
  /** Extra host names clients may use (a DNS name for a remote daemon). */
  allowedHosts: readonly string[];
}

/**
 * Whether a Host header names this daemon. Bound to loopback, only loopback
 * names pass: a rebinding page's requests carry its own host name. Bound to
 * a wildcard address with no list, any Host passes: the token guard is then
 * what protects the daemon.
 */
export function hostAdmission(
  options: HostGuardOptions,
): (header: string | undefined) => boolean {
  const allowed = new Set(options.allowedHosts.map(normalizedName));
  const wildcard = isWildcard(options.bindHost);
  if (!wildcard && !isLoopback(options.bindHost)) {
    allowed.add(normalizedName(options.bindHost));
  }
  const admits = (header: string): boolean => {
    const hostname = hostnameOf(header);
    return hostname !== undefined &&
      (isLoopback(hostname) || allowed.has(hostname) ||
        (wildcard && allowed.size === 0));
  };
  // Clients send the same few Host headers: the verdict is kept per header,
  // sparing a URL parse per request; bounded, as the header is the client's.
  const verdicts = new Map<string, boolean>();
  return (header) => {
    if (header === undefined) return false;
    let ok = verdicts.get(header);
    if (ok === undefined) {
      ok = admits(header);
      if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
      verdicts.set(header, ok);
    }
    return ok;
  };
}

/**
 * One guard's verdict on a request: a refusal, or undefined to let it
 * through; a promise only when it must wait (a JWT to verify, a body to
 * read). The daemon runs its guards in order in one middleware
 * (routes/mod.ts); `guard()` makes one a middleware of its own.
 */
export type Check = (
  c: Context<{ Variables: GuardVariables }>,
) => Response | undefined | Promise<Response | undefined>;

/** A check as a Hono middleware. */
export function guard(
  check: Check,
): MiddlewareHandler<{ Variables: GuardVariables }> {
  return async (c, next) => {
    const refused = await check(c);
    if (refused !== undefined) return refused;
    await next();
  };
}

/** Refuses requests whose Host is not a name this daemon answers to (403; see hostAdmission). */
export function hostCheck(options: HostGuardOptions): Check {
  const admitted = hostAdmission(options);
  return (c) => {
    const header = c.req.header("host");
    if (admitted(header)) return undefined;
    return errorResponse(
      403,
      `Host "${
        header ?? ""
      }" is not allowed. Use localhost, or add the name to allowed_hosts.`,
    );
  };
}

export interface OriginGuardOptions {
  /** Origins allowed besides loopback ones, e.g. `https://app.example.com`, `chrome-extension://<id>`. */
  allowedOrigins: readonly string[];
}

/** Refuses browser requests from origins other than loopback or the allowed list (403). */
export function originCheck(options: OriginGuardOptions): Check {
  const allowed = new Set(
    options.allowedOrigins.map((origin) => origin.toLowerCase()),
  );
  return (c) => {
    const origin = c.req.header("origin");
    if (origin === undefined || originAllowed(origin, allowed)) {
      return undefined;
    }
    return errorResponse(
      403,
      `Origin "${origin}" is not allowed. Add it to allowed_origins to let that page call agentd.`,
    );
  };
}

function originAllowed(origin: string, allowed: ReadonlySet<string>): boolean {
  const normalized = origin.toLowerCase();
  if (allowed.has(normalized)) return true;
  try {
    const url = new URL(normalized);
    return (url.protocol === "http:" || url.protocol === "https:") &&
      isLoopback(url.hostname);
  } catch {
    return false; // includes the opaque origin "null"
  }
}

/** 413 for bodies over `maxBytes`, whether announced by Content-Length or streamed. */
export function bodyCheck(maxBytes: number): Check {
  const tooLarge = () =>
    errorResponse(
      413,
      `Request body too large: the limit is ${maxBytes} bytes`,
      {
        details: { limit_bytes: maxBytes },
      },
    );
  const streamed = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  const passed = () => Promise.resolve();
  return (c) => {
    const request = c.req.raw;
    const length = request.headers.get("content-length");
    if (
      length === null || request.headers.has("transfer-encoding") ||
      request.method === "GET" || request.method === "HEAD"
    ) {
      // Hono's check reads `request.body`, which turns a body Deno already
      // holds whole into a stream that every later read must go through:
      // only a body of unknown length (or a GET's) is read up to the limit,
      // after which the request holds the body read.
      if (request.body === null) return undefined;
      return streamed(c, passed).then((refused) => refused ?? undefined);
    }
    return parseInt(length, 10) > maxBytes ? tooLarge() : undefined;
  };
}

/**
 * Whether a browser's request comes from a page of this same host: its
 * Origin names the Host it was sent to (false when either is missing). What
 * a form post or a cookie-carrying change must show (no CSRF).
 */
export function sameOrigin(request: Request): boolean {
  const origin = request.headers.get("origin");
  const host = request.headers.get("host");
  if (origin === null || host === null) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** The Hono variables the guards set. */
export interface GuardVariables {
  caller: Caller;
}

/**
 * Resolves the caller from the bearer token and stores it for the routes.
 * With a daemon token, every request needs a valid token (401 without);
 * without one, a request without a token is an unbound local caller.
 */
export function callerCheck(
  credentials: Credentials,
): Check {
  const local = unauthenticatedIsOperator(credentials);
  return (c) => {
    const header = c.req.header("authorization");
    if (header === undefined && local) {
      c.set("caller", {}); // resolveCaller's answer, without its promise
      return undefined;
    }
    return resolveCaller(header, credentials).then((resolution) => {
      if (resolution.ok) {
        c.set("caller", resolution.caller);
        return undefined;
      }
      const invalid = resolution.status === 400;
      return errorResponse(resolution.status, resolution.message, {
        code: invalid ? "invalid_request" : "unauthorized",
        headers: {
          "WWW-Authenticate": invalid
            ? 'Bearer realm="agentd", error="invalid_request"'
            : resolution.message.startsWith("Missing")
            ? 'Bearer realm="agentd"'
            : 'Bearer realm="agentd", error="invalid_token"',
        },
      });
    });
  };
}

export function callerGuard(
  credentials: Credentials,
): MiddlewareHandler<{ Variables: GuardVariables }> {
  return guard(callerCheck(credentials));
}
