// Token tools: get_token, refresh_token, revoke_token, validate_token.
// get_token is the one tool whose job is to return a secret.

import { z } from "zod";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import type { PlatformAuthContext } from "./context.ts";
import { PlatformName } from "./config.ts";
import { revokeTokens, validateToken } from "./validation.ts";
import type { TokenSet } from "./vault.ts";

const tool = toolDefiner<PlatformAuthContext>();

const TokenOut = z.object({
  platform: z.string(),
  token_type: z.string(),
  scope: z.string().nullable(),
  expires_at: z.string().nullable(),
});

function tokenView(platform: string, tokens: TokenSet) {
  return {
    platform,
    access_token: tokens.access_token,
    token_type: tokens.token_type,
    scope: tokens.scope ?? null,
    expires_at: tokens.expires_at === undefined
      ? null
      : new Date(tokens.expires_at).toISOString(),
  };
}

export const getToken = tool({
  name: "get_token",
  title: "Get token",
  touches: ["credentials"],
  description:
    "Return a valid access token for the platform (an API key for api_key platforms), refreshing it first when it is about to expire. " +
    "Concurrent calls share one refresh.",
  input: z.object({ platform: PlatformName }),
  output: z.object({ ...TokenOut.shape, access_token: z.string() }),
  annotations: { readOnlyHint: false, idempotentHint: true },
  async handle(ctx, { platform }) {
    const record = await ctx.auth.require(platform);
    if (record.grant === "api_key") {
      const sealed = record.sealed.api_key;
      if (
        sealed === undefined || record.status === "auth_required" ||
        record.status === "revoked"
      ) {
        throw new ToolError(
          `Platform "${platform}" has no working API key; fix it with add_platform and authenticate`,
        );
      }
      ctx.auth.audit(platform, "get", "ok", { grant: "api_key" });
      return json({
        platform,
        access_token: await ctx.auth.vault.unseal(platform, "api_key", sealed),
        token_type: "api_key",
        scope: null,
        expires_at: null,
      });
    }
    const tokens = await ctx.auth.token(platform);
    ctx.auth.audit(platform, "get", "ok");
    return json(tokenView(platform, tokens));
  },
});

export const refreshToken = tool({
  name: "refresh_token",
  title: "Refresh token",
  touches: [],
  description:
    "Refresh the platform's token now with its refresh token (or client credentials). A rejected refresh marks the platform auth_required.",
  input: z.object({ platform: PlatformName }),
  output: z.object({
    ...TokenOut.shape,
    refreshed: z.literal(true),
    status: z.literal("active"),
  }),
  annotations: { destructiveHint: false },
  async handle(ctx, { platform }) {
    const tokens = await ctx.auth.refresh(platform, "on_demand");
    const { access_token: _hidden, ...view } = tokenView(platform, tokens);
    return json({ ...view, refreshed: true, status: "active" });
  },
});

export const revokeToken = tool({
  name: "revoke_token",
  title: "Revoke token",
  touches: ["credentials"],
  description:
    "Revoke the platform's tokens at the provider (RFC 7009; the refresh token first) and delete them here. The platform stays configured.",
  input: z.object({ platform: PlatformName }),
  output: z.object({
    platform: z.string(),
    status: z.literal("revoked"),
    at_provider: z.boolean(),
    detail: z.string().optional(),
  }),
  annotations: { destructiveHint: true },
  async handle(ctx, { platform }) {
    const record = await ctx.auth.require(platform);
    return json(await revokeTokens(ctx.auth, record));
  },
});

export const validateTokenTool = tool({
  name: "validate_token",
  title: "Validate token",
  touches: [],
  description:
    "Check a token of the platform: valid, expired, revoked or invalid. Uses the provider's introspection (RFC 7662) when offered, " +
    "else verifies a JWT against the issuer's JWKS; api_key platforms run their probe.",
  input: z.object({
    platform: PlatformName,
    token: z.string().min(1).max(16_384).describe("The token to check"),
  }),
  output: z.object({
    platform: z.string(),
    valid: z.boolean(),
    state: z.enum(["valid", "expired", "revoked", "invalid"]),
    method: z.enum(["probe", "introspection", "jwks", "expiry"]),
    expires_at: z.string().nullable(),
    detail: z.string().optional(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  async handle(ctx, { platform, token }) {
    const record = await ctx.auth.require(platform);
    return json(await validateToken(ctx.auth, record, token));
  },
});
