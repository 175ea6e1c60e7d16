// What every platform-auth tool receives: the token keeper, the flows in
// progress, and the views shared by tools, /health and the callback route.

import { z } from "zod";
import type { JsonValue } from "../../platform/store/mod.ts";
import type { Authorizations } from "./authorization.ts";
import type { BrowserPages } from "./browser_pages.ts";
import type { PlatformAuth } from "./service.ts";
import {
  AUTH_STATUSES,
  type AuthStatus,
  type PlatformRecord,
  type TokenSet,
} from "./vault.ts";

export interface PlatformAuthContext {
  auth: PlatformAuth;
  flows: Authorizations;
  /** The pages where the person enters a secret or starts a consent (URL elicitation). */
  pages: BrowserPages;
}

function iso(ms: number | undefined): string | null {
  return ms === undefined ? null : new Date(ms).toISOString();
}

/** The status as of now: an active token past its expiry with no way to refresh is expired. */
export function liveStatus(
  record: PlatformRecord,
  tokens: TokenSet | undefined,
  now: number,
): AuthStatus {
  if (
    record.status === "active" && tokens?.expires_at !== undefined &&
    tokens.expires_at <= now && tokens.refresh_token === undefined &&
    record.grant !== "client_credentials"
  ) {
    return "expired";
  }
  return record.status;
}

export const GrantOut = z.enum([
  "authorization_code",
  "device_code",
  "client_credentials",
  "api_key",
]);
export const StatusOut = z.enum(AUTH_STATUSES);

/** publicView's shape. */
export const PublicViewOut = z.object({
  platform: z.string(),
  grant: GrantOut,
  status: StatusOut,
  client_id: z.string().nullable(),
  client_secret: z.enum(["unset", "set (write-only)"]),
  api_key: z.enum(["unset", "set (write-only)"]).optional(),
  // The platform's settings without its secrets.
  settings: z.looseObject({}),
  added_at: z.string(),
});

/** statusView's shape. */
export const StatusViewOut = z.object({
  platform: z.string(),
  grant: GrantOut,
  status: StatusOut,
  reason: z.string().nullable(),
  authenticated: z.boolean(),
  expires_at: z.string().nullable(),
  expires_in_s: z.number().int().nullable(),
  refresh_at: z.string().nullable(),
  has_refresh_token: z.boolean(),
  scope: z.string().nullable(),
  updated_at: z.string().nullable(),
});

/** A platform without any secret: for list_platforms and add_platform. */
export function publicView(
  record: PlatformRecord,
): { [key: string]: JsonValue } {
  const { client_secret: _secret, api_key: _key, ...settings } =
    record.settings;
  return {
    platform: record.name,
    grant: record.grant,
    status: record.status,
    client_id: settings.client_id ?? null,
    client_secret: record.sealed.client_secret === undefined
      ? "unset"
      : "set (write-only)",
    ...(record.grant === "api_key"
      ? {
        api_key: record.sealed.api_key === undefined
          ? "unset"
          : "set (write-only)",
      }
      : {}),
    settings: JSON.parse(JSON.stringify(settings)),
    added_at: new Date(record.added_at).toISOString(),
  };
}

export async function statusView(
  ctx: PlatformAuthContext,
  record: PlatformRecord,
): Promise<{ [key: string]: JsonValue }> {
  const now = ctx.auth.clock.now();
  const tokens = record.grant === "api_key"
    ? undefined
    : await ctx.auth.vault.token(record.name);
  const status = liveStatus(record, tokens, now);
  const expires = tokens?.expires_at;
  return {
    platform: record.name,
    grant: record.grant,
    status,
    reason: record.status_reason ?? null,
    authenticated: status === "active",
    expires_at: iso(expires),
    expires_in_s: expires === undefined
      ? null
      : Math.round((expires - now) / 1000),
    refresh_at: expires === undefined || tokens?.refresh_token === undefined
      ? null
      : iso(expires - ctx.auth.config.refresh_margin_s * 1000),
    has_refresh_token: tokens?.refresh_token !== undefined,
    scope: tokens?.scope ?? null,
    updated_at: iso(record.updated_at),
  };
}
