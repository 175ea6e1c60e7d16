// JWT bearer tokens (the one import seam for `jose`): the daemon accepts a JWT
// signed with a configured HS256 secret or by a key from a JWKS URL, and a
// claim in it binds the caller to an agent, as an agent token does.

import { createRemoteJWKSet, errors, jwtVerify, SignJWT } from "jose";

// The seam for jose: the platform-auth server verifies tokens with these.
export { createRemoteJWKSet, decodeJwt, errors, jwtVerify } from "jose";
export type { JWTPayload } from "jose";
// The config section lives apart so that validating a config file needs no jose.
export { JwtConfig } from "./jwt_config.ts";
import type { JwtConfig } from "./jwt_config.ts";

const AGENT_NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Asymmetric algorithms accepted from a JWKS; HS256 only with a shared secret. */
const JWKS_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
];

export type JwtCheck =
  | { ok: true; agent: string }
  | { ok: false; message: string };

/** Verifies a JWT and reads the agent it binds the caller to. */
export type JwtVerifier = (token: string) => Promise<JwtCheck>;

export function jwtVerifier(config: JwtConfig): JwtVerifier {
  const options = {
    issuer: config.issuer,
    audience: config.audience,
    // A JWT without an expiry would bind its bearer to the agent forever.
    requiredClaims: ["exp"],
  };
  const verify = config.secret !== undefined
    ? (() => {
      const key = new TextEncoder().encode(config.secret);
      return (token: string) =>
        jwtVerify(token, key, { ...options, algorithms: ["HS256"] });
    })()
    : (() => {
      const keys = createRemoteJWKSet(new URL(config.jwks_url ?? ""));
      return (token: string) =>
        jwtVerify(token, keys, { ...options, algorithms: JWKS_ALGORITHMS });
    })();
  return async (token) => {
    try {
      const { payload } = await verify(token);
      const agent = payload[config.agent_claim];
      if (typeof agent !== "string" || !AGENT_NAME.test(agent)) {
        return {
          ok: false,
          message:
            `Invalid bearer token: the JWT's "${config.agent_claim}" claim must name an agent`,
        };
      }
      return { ok: true, agent };
    } catch (error) {
      return { ok: false, message: `Invalid bearer token: ${why(error)}` };
    }
  };
}

/** Why a JWT was refused, without echoing any of it. */
function why(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "the JWT has expired";
  if (
    error instanceof errors.JWTClaimValidationFailed &&
    error.reason === "missing"
  ) {
    return `the JWT has no ${error.claim} claim`;
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    return `the JWT's "${error.claim}" claim is not accepted`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return "the JWT's signature does not verify";
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return "the JWT's algorithm is not accepted";
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return "no key of the JWKS matches the JWT";
  }
  if (error instanceof errors.JOSEError) return "the JWT is not valid";
  return "the JWT could not be checked";
}

/** An HS256 JWT binding its bearer to `agent` (for operators' scripts and tests). */
export async function signAgentJwt(options: {
  secret: string;
  agent: string;
  /** A time span from now ("1h", "-1m"), or the expiry in epoch seconds; default "1h". */
  expiresIn?: string | number;
  claim?: string;
  issuer?: string;
  audience?: string;
}): Promise<string> {
  let jwt = new SignJWT({ [options.claim ?? "agent"]: options.agent })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "1h");
  if (options.issuer !== undefined) jwt = jwt.setIssuer(options.issuer);
  if (options.audience !== undefined) jwt = jwt.setAudience(options.audience);
  return await jwt.sign(new TextEncoder().encode(options.secret));
}
