// Who is calling. A bearer token either is the daemon's own token (an
// unbound caller, like stdio or loopback without tokens), an agent's token or
// a JWT with an agent claim (platform/jwt.ts), both of which bind the caller
// to that agent: servers enforce that it reaches only what belongs to the
// agent, whatever the arguments say.

import type { JwtVerifier } from "./jwt.ts";

export interface Caller {
  /** The agent the caller is bound to; undefined for unbound callers. */
  agent?: string;
}

export interface Credentials {
  /** The daemon token; when set, every request must carry a valid token. */
  token?: string;
  /** Agent name -> token. */
  agentTokens: Readonly<Record<string, string>>;
  /** Accepts JWTs whose agent claim binds the caller (the `jwt` config). */
  jwt?: JwtVerifier;
}

/**
 * Why `credentials` cannot be served, or undefined when they can: with agent
 * tokens or JWTs but no daemon token, a caller sending no credentials could
 * not be told from the operator. One rule for every face (cli/boot.ts refuses
 * to start, createApp refuses to build), so no route has to reason about a
 * third, anonymous identity.
 */
export function credentialsProblem(
  credentials: Omit<Credentials, "jwt"> & { jwt?: unknown },
): string | undefined {
  const agentTokens = Object.keys(credentials.agentTokens).length > 0;
  if (credentials.token !== undefined || (!agentTokens && !credentials.jwt)) {
    return undefined;
  }
  return `${
    agentTokens ? "agent_tokens" : "jwt"
  } is set without a daemon token: a request without credentials could not be ` +
    `told from the operator's, so any local process would act as the operator. ` +
    `Set AGENTD_TOKEN (16+ characters) or token_file, and use it where you act ` +
    `as the operator (agentd approve and agentd ui read it from the same config).`;
}

/**
 * Whether a request without credentials is the operator: only when no
 * credential of any kind is configured (loopback without tokens). Agent
 * credentials without a daemon token never reach a face (credentialsProblem);
 * should they, no credentials is still not the operator.
 */
export function unauthenticatedIsOperator(
  credentials: Omit<Credentials, "jwt"> & { jwt?: unknown },
): boolean {
  return credentials.token === undefined &&
    credentialsProblem(credentials) === undefined;
}

export type Resolution =
  | { ok: true; caller: Caller }
  | { ok: false; status: 400 | 401; message: string };

const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i;

/** Maps an Authorization header (or its absence) to a caller, or says why not. */
export async function resolveCaller(
  header: string | undefined,
  credentials: Credentials,
): Promise<Resolution> {
  if (header === undefined) {
    return unauthenticatedIsOperator(credentials) ? { ok: true, caller: {} } : {
      ok: false,
      status: 401,
      message: "Missing bearer token: send Authorization: Bearer <token>",
    };
  }
  const token = header.match(BEARER)?.[1];
  if (token === undefined) {
    return {
      ok: false,
      status: 400,
      message: "Malformed Authorization header: expected Bearer <token>",
    };
  }
  if (credentials.token !== undefined && sameSecret(token, credentials.token)) {
    return { ok: true, caller: {} };
  }
  // Compare against every agent token so timing does not reveal which matched.
  let agent: string | undefined;
  for (const [name, candidate] of Object.entries(credentials.agentTokens)) {
    if (sameSecret(token, candidate) && agent === undefined) agent = name;
  }
  if (agent !== undefined) return { ok: true, caller: { agent } };
  if (credentials.jwt !== undefined && looksLikeJwt(token)) {
    const checked = await credentials.jwt(token);
    return checked.ok
      ? { ok: true, caller: { agent: checked.agent } }
      : { ok: false, status: 401, message: checked.message };
  }
  return { ok: false, status: 401, message: "Invalid bearer token" };
}

/** Three base64url parts: worth checking as a JWT (agent tokens rarely are). */
function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/** Compares secrets without leaking their content through timing. */
export function sameSecret(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  let diff = left.length ^ right.length;
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    diff |= (left[i] ?? 0) ^ (right[i] ?? 0);
  }
  return diff === 0;
}
