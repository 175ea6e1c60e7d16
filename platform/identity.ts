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
    return credentials.token === undefined ? { ok: true, caller: {} } : {
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
