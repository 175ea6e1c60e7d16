// validate_token and revoke_token: RFC 7662 introspection where the provider
// offers it, JWT verification against the issuer's JWKS otherwise, RFC 7009
// revocation at the provider.

import { lazy } from "../../platform/lazy.ts";
import { messageOf } from "../../platform/errors.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { ToolError } from "../kit/mod.ts";
import { runProbe } from "./api_keys.ts";
import { introspect, revoke } from "./provider.ts";
import type { PlatformAuth } from "./service.ts";
import type { PlatformRecord } from "./vault.ts";

type Verdict = "valid" | "expired" | "revoked" | "invalid";

// jose loads on the first validation, not with the server (idle memory).
const jose = () =>
  lazy<typeof import("../../platform/jwt.ts")>(
    "../../platform/jwt.ts",
    import.meta.url,
  );

function expiryOf(
  token: string,
  decodeJwt: (token: string) => { exp?: number },
): number | undefined {
  if (token.split(".").length !== 3) return undefined;
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === "number" ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export async function validateToken(
  auth: PlatformAuth,
  record: PlatformRecord,
  token: string,
): Promise<{ [key: string]: JsonValue }> {
  const platform = record.name;
  const now = auth.clock.now();
  const answer = (
    verdict: Verdict,
    method: string,
    expiresAt?: number,
    detail?: string,
  ) => {
    auth.audit(platform, "validate", verdict, { method });
    return {
      platform,
      valid: verdict === "valid",
      state: verdict,
      method,
      expires_at: expiresAt === undefined
        ? null
        : new Date(expiresAt).toISOString(),
      ...(detail ? { detail } : {}),
    };
  };
  if (record.grant === "api_key") {
    const probe = await runProbe(record, token);
    return answer(
      probe.ok ? "valid" : "invalid",
      "probe",
      undefined,
      probe.detail,
    );
  }
  const provider = await auth.provider(record);
  // What we know of the token's expiry: its JWT claim, or the stored token's record.
  const stored = await auth.vault.token(platform);
  const { createRemoteJWKSet, decodeJwt, errors, jwtVerify } = await jose();
  const knownExpiry = expiryOf(token, decodeJwt) ??
    (stored?.access_token === token ? stored.expires_at : undefined);
  if (provider.as.introspection_endpoint !== undefined) {
    let result;
    try {
      result = await introspect(provider, token);
    } catch (error) {
      throw new ToolError(
        `Cannot introspect at "${platform}": ${messageOf(error)}`,
      );
    }
    const exp = typeof result.exp === "number"
      ? result.exp * 1000
      : knownExpiry;
    if (result.active) {
      return answer(
        exp !== undefined && exp <= now ? "expired" : "valid",
        "introspection",
        exp,
      );
    }
    // Inactive: expired when its known expiry has passed, else revoked (or never issued).
    return answer(
      knownExpiry !== undefined && knownExpiry <= now ? "expired" : "revoked",
      "introspection",
      knownExpiry,
    );
  }
  if (provider.as.jwks_uri !== undefined && token.split(".").length === 3) {
    const jwks = createRemoteJWKSet(new URL(provider.as.jwks_uri));
    try {
      const { payload } = await jwtVerify(token, jwks, {
        issuer: provider.as.issuer,
        currentDate: new Date(now),
      });
      return answer(
        "valid",
        "jwks",
        typeof payload.exp === "number" ? payload.exp * 1000 : undefined,
        "signature and expiry checked; revocation cannot be seen without introspection",
      );
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        return answer("expired", "jwks", knownExpiry);
      }
      return answer("invalid", "jwks", knownExpiry, messageOf(error));
    }
  }
  if (knownExpiry !== undefined) {
    return answer(
      knownExpiry <= now ? "expired" : "valid",
      "expiry",
      knownExpiry,
      "the provider offers neither introspection nor JWKS: only the expiry was checked",
    );
  }
  throw new ToolError(
    `Cannot validate tokens of "${platform}": its provider offers neither introspection nor a JWKS, and the token's expiry is unknown`,
  );
}

/** Revokes at the provider (refresh token first: it ends the grant), then forgets the tokens. */
export async function revokeTokens(
  auth: PlatformAuth,
  record: PlatformRecord,
): Promise<{ [key: string]: JsonValue }> {
  const platform = record.name;
  return await auth.lock(platform).run(async () => {
    if (record.grant === "api_key") {
      await auth.vault.dropToken({
        ...record,
        status: "revoked",
        updated_at: auth.clock.now(),
      });
      auth.audit(platform, "revoke", "local_only");
      return {
        platform,
        status: "revoked",
        at_provider: false,
        detail:
          "API keys are revoked at the platform itself; the status is now revoked",
      };
    }
    const tokens = await auth.vault.token(platform);
    if (!tokens) {
      throw new ToolError(`Platform "${platform}" has no token to revoke`);
    }
    const provider = await auth.provider(record);
    let atProvider = false;
    if (provider.as.revocation_endpoint !== undefined) {
      try {
        if (tokens.refresh_token !== undefined) {
          await revoke(provider, tokens.refresh_token, "refresh_token");
        }
        await revoke(provider, tokens.access_token, "access_token");
        atProvider = true;
      } catch (error) {
        auth.audit(platform, "revoke", "failed", { error: messageOf(error) });
        throw new ToolError(
          `The provider of "${platform}" did not revoke the token: ${
            messageOf(error)
          }; the token is kept`,
        );
      }
    }
    auth.forget(platform);
    await auth.vault.dropToken({
      ...record,
      status: "revoked",
      status_reason: atProvider
        ? "revoked at the provider"
        : "forgotten locally",
      updated_at: auth.clock.now(),
    });
    auth.audit(platform, "revoke", atProvider ? "ok" : "local_only");
    return {
      platform,
      status: "revoked",
      at_provider: atProvider,
      ...(atProvider ? {} : {
        detail:
          "the provider has no revocation endpoint: the tokens were only deleted here",
      }),
    };
  });
}
