// Well-known platforms: endpoints and default scopes only. A user completes
// an entry with their own client id (and secret) through add_platform.

import type { PlatformConfig } from "./config.ts";

export const CATALOGUE: Readonly<Record<string, PlatformConfig>> = {
  github: {
    grant: "authorization_code",
    authorization_endpoint: "https://github.com/login/oauth/authorize",
    token_endpoint: "https://github.com/login/oauth/access_token",
    device_authorization_endpoint: "https://github.com/login/device/code",
    scopes: ["repo", "read:user"],
    token_endpoint_auth_method: "client_secret_post",
  },
  google: {
    grant: "authorization_code",
    issuer: "https://accounts.google.com",
    scopes: ["openid", "email", "profile"],
    // Google issues a refresh token only for offline access with consent.
    authorize_params: { access_type: "offline", prompt: "consent" },
  },
  microsoft: {
    grant: "authorization_code",
    // The multi-tenant "common" endpoints: discovery there names a per-tenant issuer.
    authorization_endpoint:
      "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
    token_endpoint:
      "https://login.microsoftonline.com/common/oauth2/v2.0/token",
    device_authorization_endpoint:
      "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode",
    scopes: ["openid", "profile", "offline_access", "User.Read"],
  },
  slack: {
    grant: "authorization_code",
    authorization_endpoint: "https://slack.com/oauth/v2/authorize",
    token_endpoint: "https://slack.com/api/oauth.v2.access",
    scopes: ["channels:read", "chat:write"],
    token_endpoint_auth_method: "client_secret_post",
  },
  gitlab: {
    grant: "authorization_code",
    issuer: "https://gitlab.com",
    scopes: ["read_user", "api"],
  },
};

/** The catalogue entry under `preset`, overlaid with what the user gave. */
export function completeFromCatalogue(
  platform: string,
  config: PlatformConfig,
): PlatformConfig {
  const name = config.preset ?? platform;
  const base = CATALOGUE[name];
  if (config.preset !== undefined && base === undefined) {
    throw new Error(
      `Unknown preset "${config.preset}"; known: ${
        Object.keys(CATALOGUE).join(", ")
      }`,
    );
  }
  return { ...base, ...config };
}
