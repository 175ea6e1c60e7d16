// Authentication tools: authenticate, oauth_callback, get_auth_status.

import { z } from "zod";
import { json, toolDefiner } from "../kit/mod.ts";
import {
  GrantOut,
  type PlatformAuthContext,
  StatusOut,
  statusView,
  StatusViewOut,
} from "./context.ts";
import { PlatformName } from "./config.ts";
import { checkMethod } from "./authorization.ts";
import {
  authenticateKey,
  consentInBrowser,
  elicitsUrls,
  withClientSecret,
} from "./url_elicitation.ts";

const tool = toolDefiner<PlatformAuthContext>();

export const authenticate = tool({
  name: "authenticate",
  title: "Authenticate",
  taskSupport: "optional",
  // It may store new tokens for everyone: an agent could consent with an
  // account of its own (its own browser tools open the URL), so a person is
  // asked unless a rule allows credentials for it.
  touches: ["credentials"],
  description:
    "Start authentication for a platform. oauth: returns the authorization URL to open (PKCE, one-time state; opened in the " +
    "default browser when the platform sets open_browser), or a device code to enter (device_code platforms), or gets a " +
    "token at once (client_credentials). api_key: checks the stored key with the platform's probe. A key that does not pass, " +
    "or a client secret the platform lacks, the person enters in agentd's own page, never in the chat. A client with URL " +
    "elicitation is shown the page (consent, key or secret) and the call ends once the person is done.",
  input: z.object({
    platform: PlatformName,
    method: z.enum(["oauth", "api_key"]).optional()
      .describe("oauth (default for OAuth platforms) or api_key"),
  }),
  // What the grant's start gave: an authorization URL to open, a device
  // code to enter, a token at once (client credentials), or a probed API key.
  output: z.object({
    platform: z.string(),
    method: z.enum(["oauth", "api_key"]),
    grant: GrantOut.optional(),
    status: StatusOut.optional(),
    probe_status: z.number().int().optional(),
    authorization_url: z.string().optional(),
    redirect_uri: z.string().optional(),
    browser: z.string().optional(),
    verification_uri: z.string().optional(),
    verification_uri_complete: z.string().nullable().optional(),
    user_code: z.string().optional(),
    expires_at: z.string().nullable().optional(),
    next: z.string().optional(),
  }),
  annotations: { openWorldHint: true },
  async handle(ctx, { platform, method }, call) {
    const record = await ctx.auth.require(platform);
    const chosen = method ?? (record.grant === "api_key" ? "api_key" : "oauth");
    checkMethod(record, chosen);
    if (record.grant === "api_key") {
      return json(await authenticateKey(ctx, call, record));
    }
    const ready = await withClientSecret(ctx, call, record);
    if (ready.grant === "authorization_code" && elicitsUrls(call)) {
      return json(await consentInBrowser(ctx, call, ready));
    }
    return json(await ctx.flows.start(ready));
  },
});

export const oauthCallback = tool({
  name: "oauth_callback",
  title: "Complete OAuth callback",
  touches: ["credentials"], // stores the tokens (see authenticate)
  description:
    "Complete an authorization with the code and state the provider sent to the redirect URI (the daemon's /oauth/callback " +
    "does this by itself). A state is valid once, for one platform, until it expires.",
  input: z.object({
    code: z.string().min(1).max(4096).describe("The authorization code"),
    state: z.string().min(1).max(512).describe(
      "The state from the same redirect",
    ),
  }),
  output: z.object({
    platform: z.string(),
    status: z.literal("active"),
    token_type: z.string(),
    scope: z.string().nullable(),
    expires_at: z.string().nullable(),
    refresh_token: z.boolean(),
  }),
  annotations: { destructiveHint: false },
  async handle(ctx, { code, state }) {
    return json(await ctx.flows.complete(new URLSearchParams({ code, state })));
  },
});

export const getAuthStatus = tool({
  name: "get_auth_status",
  title: "Auth status",
  touches: [],
  description:
    "Authentication status of a platform: not_authenticated, pending, active, expired, auth_required (its refresh was rejected: authenticate again) or revoked, with expiry and next refresh.",
  input: z.object({ platform: PlatformName }),
  output: StatusViewOut,
  annotations: { readOnlyHint: true },
  async handle(ctx, { platform }) {
    return json(await statusView(ctx, await ctx.auth.require(platform)));
  },
});
