// The daemon's `jwt` config section, apart from jose: every face validates the
// config file, and only a daemon that verifies JWTs needs jose loaded.

import { z } from "zod";

/** The daemon's `jwt` config section. */
export const JwtConfig = z.strictObject({
  secret: z.string().min(32, {
    error: "expected at least 32 characters (an HS256 secret)",
  }).optional()
    .describe("HS256 secret JWTs are signed with"),
  jwks_url: z.url({ protocol: /^https?$/ }).optional()
    .describe("JWKS URL of the keys JWTs are signed with (RS/PS/ES/EdDSA)"),
  issuer: z.string().min(1).optional()
    .describe("Required `iss` claim"),
  audience: z.string().min(1).optional()
    .describe("Required `aud` claim"),
  agent_claim: z.string().min(1).default("agent")
    .describe("Claim naming the agent the caller is bound to"),
}).refine(
  (jwt) => (jwt.secret === undefined) !== (jwt.jwks_url === undefined),
  {
    error: "set exactly one of jwt.secret and jwt.jwks_url",
  },
).refine(
  // Keys from a JWKS usually sign tokens for many services: without iss and
  // aud checks, any token of that issuer's realm would bind an agent here.
  (jwt) =>
    jwt.jwks_url === undefined ||
    (jwt.issuer !== undefined && jwt.audience !== undefined),
  {
    error:
      "with jwt.jwks_url, set jwt.issuer and jwt.audience too (the iss and aud this daemon's tokens carry)",
  },
);
export type JwtConfig = z.output<typeof JwtConfig>;
