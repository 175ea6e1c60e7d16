// Guards every HTTP request passes before routing: Host and Origin checks
// against DNS rebinding, a body size limit and the bearer token.

import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { errorResponse } from "./http_errors.ts";
import { type Caller, type Credentials, resolveCaller } from "./identity.ts";
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

/** Host headers whose verdict `hostGuard` keeps. */
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

/** Rejects requests whose Host is not a name this daemon answers to (403; see hostAdmission). */
export function hostGuard(options: HostGuardOptions): MiddlewareHandler {
  const admitted = hostAdmission(options);
  return async (c, next) => {
    const header = c.req.header("host");
    if (!admitted(header)) {
      return errorResponse(
        403,
        `Host "${
          header ?? ""
        }" is not allowed. Use localhost, or add the name to allowed_hosts.`,
      );
    }
    await next();
  };
}

export interface OriginGuardOptions {
  /** Origins allowed besides loopback ones, e.g. `https://app.example.com`, `chrome-extension://<id>`. */
  allowedOrigins: readonly string[];
}

/** Rejects browser requests from origins other than loopback or the allowed list (403). */
export function originGuard(options: OriginGuardOptions): MiddlewareHandler {
  const allowed = new Set(
    options.allowedOrigins.map((origin) => origin.toLowerCase()),
  );
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined && !originAllowed(origin, allowed)) {
      return errorResponse(
        403,
        `Origin "${origin}" is not allowed. Add it to allowed_origins to let that page call agentd.`,
      );
    }
    await next();
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
export function bodyGuard(maxBytes: number): MiddlewareHandler {
  const tooLarge = () =>
    errorResponse(
      413,
      `Request body too large: the limit is ${maxBytes} bytes`,
      {
        details: { limit_bytes: maxBytes },
      },
    );
  const streamed = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return (c, next) => {
    // Hono's check reads `request.body`, which turns a body Deno already
    // holds whole into a stream that every later read must go through: an
    // announced length is checked here without touching the body.
    const request = c.req.raw;
    const length = request.headers.get("content-length");
    if (
      length === null || request.headers.has("transfer-encoding") ||
      request.method === "GET" || request.method === "HEAD"
    ) {
      return streamed(c, next);
    }
    return parseInt(length, 10) > maxBytes
      ? Promise.resolve(tooLarge())
      : next();
  };
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
export function callerGuard(
  credentials: Credentials,
): MiddlewareHandler<{ Variables: GuardVariables }> {
  return async (c, next) => {
    const resolution = await resolveCaller(
      c.req.header("authorization"),
      credentials,
    );
    if (!resolution.ok) {
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
    }
    c.set("caller", resolution.caller);
    await next();
  };
}
