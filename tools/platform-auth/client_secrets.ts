// A client secret the person entered in the daemon's page (URL
// elicitation): for client credentials it is tried at once (a refused one is
// never stored), then sealed into the platform's record. Like an API key, it
// goes nowhere else.

import { messageOf } from "../../platform/errors.ts";
import type { SecretVerdict } from "./browser_pages.ts";
import type { TokenEndpointResponse } from "./oauth.ts";
import { clientCredentialsGrant, resolveProvider } from "./provider.ts";
import type { PlatformAuth } from "./service.ts";
import type { PlatformRecord } from "./vault.ts";

/**
 * Whether an OAuth platform lacks the client secret its config says it
 * authenticates with (client credentials always do; other grants when
 * `token_endpoint_auth_method` names a secret).
 */
export function lacksClientSecret(
  record: Pick<PlatformRecord, "grant" | "settings">,
  secret: unknown,
): boolean {
  if (record.grant === "api_key" || secret !== undefined) return false;
  const method = record.settings.token_endpoint_auth_method;
  return record.grant === "client_credentials" ||
    method === "client_secret_basic" || method === "client_secret_post";
}

export async function saveEnteredClientSecret(
  auth: PlatformAuth,
  platform: string,
  secret: string,
): Promise<SecretVerdict> {
  const record = await auth.require(platform);
  if (record.grant === "api_key") {
    return {
      ok: false,
      message: `"${platform}" is no longer an OAuth platform.`,
    };
  }
  let response: TokenEndpointResponse | undefined;
  if (record.grant === "client_credentials") {
    try {
      const provider = await resolveProvider(
        record.settings,
        secret,
        auth.config.http_timeout_ms,
      );
      response = await clientCredentialsGrant(
        provider,
        record.settings.scopes ?? [],
      );
    } catch (error) {
      auth.audit(platform, "client_credentials", "rejected", {
        source: "page",
      });
      return {
        ok: false,
        message: `The provider did not accept this client secret (${
          messageOf(error)
        }). Check it and enter it again.`,
      };
    }
  }
  const saved = await auth.lock(platform).run(async () => {
    const current = await auth.vault.platform(platform);
    // Replaced or removed meanwhile: the secret belonged to the old client.
    if (
      current === undefined || current.grant !== record.grant ||
      current.settings.client_id !== record.settings.client_id ||
      current.settings.token_endpoint !== record.settings.token_endpoint ||
      current.settings.issuer !== record.settings.issuer
    ) {
      return false;
    }
    const next: PlatformRecord = {
      ...current,
      sealed: {
        ...current.sealed,
        client_secret: await auth.vault.seal(platform, "client_secret", secret),
      },
      status_reason: response === undefined
        ? "client secret saved: authenticate to connect"
        : current.status_reason,
      updated_at: auth.clock.now(),
    };
    auth.forget(platform); // the provider was built without the secret
    await auth.vault.putPlatform(next);
    if (response !== undefined) await auth.saveTokens(next, response);
    return true;
  });
  if (!saved) {
    return {
      ok: false,
      message: `"${platform}" changed meanwhile; ask the agent to try again.`,
    };
  }
  auth.audit(
    platform,
    response === undefined ? "authorize" : "client_credentials",
    response === undefined ? "client_secret_saved" : "ok",
    { source: "page" },
  );
  return {
    ok: true,
    message: response === undefined
      ? `The client secret of "${platform}" is saved.`
      : `The client secret of "${platform}" was accepted by the provider and is saved.`,
  };
}
