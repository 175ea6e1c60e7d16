// Authentication tools: authenticate, oauth_callback, get_auth_status.

import { z } from "zod";
import { json, toolDefiner } from "../kit/mod.ts";
import { type PlatformAuthContext, statusView } from "./context.ts";
import { PlatformName } from "./config.ts";

const tool = toolDefiner<PlatformAuthContext>();

export const authenticate = tool({
  name: "authenticate",
  touches: [],
  description:
    "Start authentication for a platform. oauth: returns the authorization URL to open (PKCE, one-time state; opened in the " +
    "default browser when the platform sets open_browser), or a device code to enter (device_code platforms), or gets a " +
    "token at once (client_credentials). api_key: checks the stored key with the platform's probe.",
  input: z.object({
    platform: PlatformName,
    method: z.enum(["oauth", "api_key"]).optional()
      .describe("oauth (default for OAuth platforms) or api_key"),
  }),
  annotations: { openWorldHint: true },
  async handle(ctx, { platform, method }) {
    const record = await ctx.auth.require(platform);
    const chosen = method ?? (record.grant === "api_key" ? "api_key" : "oauth");
    return json(await ctx.flows.start(record, chosen));
  },
});

export const oauthCallback = tool({
  name: "oauth_callback",
  touches: [],
  description:
    "Complete an authorization with the code and state the provider sent to the redirect URI (the daemon's /oauth/callback " +
    "does this by itself). A state is valid once, for one platform, until it expires.",
  input: z.object({
    code: z.string().min(1).max(4096).describe("The authorization code"),
    state: z.string().min(1).max(512).describe(
      "The state from the same redirect",
    ),
  }),
  annotations: { destructiveHint: false },
  async handle(ctx, { code, state }) {
    return json(await ctx.flows.complete(new URLSearchParams({ code, state })));
  },
});

export const getAuthStatus = tool({
  name: "get_auth_status",
  touches: [],
  description:
    "Authentication status of a platform: not_authenticated, pending, active, expired, auth_required (its refresh was rejected: authenticate again) or revoked, with expiry and next refresh.",
  input: z.object({ platform: PlatformName }),
  annotations: { readOnlyHint: true },
  async handle(ctx, { platform }) {
    return json(await statusView(ctx, await ctx.auth.require(platform)));
  },
});
