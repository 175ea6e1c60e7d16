// Platform tools: list_platforms, add_platform, remove_platform. Secrets
// given here are sealed at once and never shown again.

import { z } from "zod";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import { messageOf } from "../../platform/errors.ts";
import { completeFromCatalogue } from "./catalogue.ts";
import { type Grant, PlatformConfig, PlatformName } from "./config.ts";
import {
  type PlatformAuthContext,
  publicView,
  PublicViewOut,
  statusView,
  StatusViewOut,
} from "./context.ts";
import { checkEndpoints, ENDPOINTS, resolveProvider } from "./provider.ts";
import type { PlatformRecord } from "./vault.ts";
import { type PersonPage, secretFromPerson } from "./url_elicitation.ts";
import { lacksClientSecret } from "./client_secrets.ts";

const tool = toolDefiner<PlatformAuthContext>();

export const listPlatforms = tool({
  name: "list_platforms",
  title: "List platforms",
  touches: [],
  description:
    "List configured platforms with their grant, client id, scopes and authentication status. Secrets are never shown.",
  input: z.object({}),
  output: z.object({
    platforms: z.array(z.object({
      ...PublicViewOut.shape,
      ...StatusViewOut.shape,
    })),
    count: z.number().int(),
  }),
  annotations: { readOnlyHint: true },
  async handle(ctx) {
    const platforms = [];
    for (const record of await ctx.auth.vault.platforms()) {
      platforms.push({
        ...publicView(record),
        ...(await statusView(ctx, record)),
      });
    }
    return json({ platforms, count: platforms.length });
  },
});

function grantOf(config: PlatformConfig): Grant {
  return config.grant ??
    (config.api_key !== undefined || config.api_key_probe !== undefined
      ? "api_key"
      : "authorization_code");
}

/** What each grant needs, checked before anything is stored. */
function checkComplete(grant: Grant, config: PlatformConfig): void {
  if (grant === "api_key") {
    // No api_key: the person enters it in agentd's page (url_elicitation.ts).
    if (config.api_key_probe === undefined) {
      throw new Error(
        "config.api_key_probe is required for an api_key platform (a request that succeeds only with a good key)",
      );
    }
    return;
  }
  if (config.client_id === undefined) {
    throw new Error(
      `config.client_id is required for ${grant} (register an app at the platform and give its client id)`,
    );
  }
  if (config.issuer === undefined && config.token_endpoint === undefined) {
    throw new Error("config needs issuer (for discovery) or token_endpoint");
  }
}

export const addPlatform = tool({
  name: "add_platform",
  title: "Add platform",
  touches: ["credentials"],
  description:
    "Add or replace a platform: issuer (discovery) or explicit endpoints, client_id and client_secret, scopes, " +
    "token_endpoint_auth_method, authorize_params; or an api_key_probe. Leave api_key and client_secret out: the person " +
    "enters them in agentd's own page, shown through URL elicitation or given as enter_secret_at, never in the chat. " +
    "preset (or a platform named github, google, microsoft, slack, gitlab) fills in endpoints and default scopes. " +
    "Secrets are write-only.",
  input: z.object({
    platform: PlatformName,
    config: PlatformConfig.describe("The platform's configuration"),
  }),
  output: z.object({
    ...PublicViewOut.shape,
    replaced: z.boolean(),
    tokens_dropped: z.literal(true).optional(),
    note: z.string().optional(),
    // A secret left out and no client to show the page: where the person enters it.
    enter_secret_at: z.string().optional(),
    page_expires_at: z.string().optional(),
  }),
  annotations: { destructiveHint: false, idempotentHint: true },
  async handle(ctx, { platform, config }, call) {
    let complete: PlatformConfig;
    try {
      complete = completeFromCatalogue(platform, config);
      checkComplete(grantOf(complete), complete);
      checkEndpoints(complete);
    } catch (error) {
      throw new ToolError(
        `Cannot add "${platform}": ${messageOf(error)}; nothing was stored`,
      );
    }
    const grant = grantOf(complete);
    const { client_secret, api_key, ...settings } = complete;
    if (grant !== "api_key") {
      // Discovery now: a wrong issuer fails here, not at the first authenticate.
      try {
        await resolveProvider(
          settings,
          client_secret,
          ctx.auth.config.http_timeout_ms,
        );
      } catch (error) {
        throw new ToolError(
          `Cannot add "${platform}": ${messageOf(error)}; nothing was stored`,
        );
      }
    }
    const now = ctx.auth.clock.now();
    // Under the platform's lock: a refresh running now finishes first, and
    // none starts with the old tokens against the new endpoints.
    const outcome = await ctx.auth.lock(platform).run(async () => {
      const existing = await ctx.auth.vault.platform(platform);
      const moved = existing === undefined
        ? []
        : await providerChanges(ctx, existing, {
          grant,
          settings,
          client_secret,
        });
      const dropTokens = moved.length > 0;
      // No key given: the stored one stays while the probe is the same;
      // otherwise the person is asked for one (below).
      const keptKey = grant === "api_key" && api_key === undefined &&
          !dropTokens
        ? existing?.sealed.api_key
        : undefined;
      // The secret the person is asked for (below), when the config lacks it.
      let missing: "api_key" | "client_secret" | undefined;
      if (grant === "api_key") {
        if (api_key === undefined && keptKey === undefined) missing = "api_key";
      } else if (lacksClientSecret({ grant, settings }, client_secret)) {
        missing = "client_secret";
      }
      const record: PlatformRecord = {
        name: platform,
        grant,
        settings,
        sealed: {
          ...(client_secret === undefined ? {} : {
            client_secret: await ctx.auth.vault.seal(
              platform,
              "client_secret",
              client_secret,
            ),
          }),
          ...(api_key === undefined ? {} : {
            api_key: await ctx.auth.vault.seal(platform, "api_key", api_key),
          }),
          ...(keptKey === undefined ? {} : { api_key: keptKey }),
        },
        status: dropTokens || missing !== undefined
          ? "not_authenticated"
          : existing?.status ?? "not_authenticated",
        status_reason: missing !== undefined
          ? `no ${
            missing === "api_key" ? "API key" : "client secret"
          } yet: the person enters it in agentd's page (authenticate asks again)`
          : dropTokens
          ? `its ${moved.join(", ")} changed: authenticate again`
          : existing?.status_reason,
        added_at: existing?.added_at ?? now,
        updated_at: now,
      };
      ctx.auth.forget(platform);
      // Credentials follow their provider: tokens issued to the old client
      // or endpoints are never sent to new ones.
      if (dropTokens) await ctx.auth.vault.dropToken(record);
      else await ctx.auth.vault.putPlatform(record);
      return { existing, record, moved, missing };
    });
    const { existing, record, moved, missing } = outcome;
    if (moved.length === 0) await ctx.auth.reschedule(platform);
    ctx.auth.audit(
      platform,
      "authorize",
      existing ? "platform_replaced" : "platform_added",
      moved.length > 0 ? { grant, tokens_dropped: moved.join(",") } : { grant },
    );
    let current = record;
    let page: PersonPage | undefined;
    if (missing !== undefined) {
      const label = missing === "api_key" ? "API key" : "client secret";
      const asked = await secretFromPerson(
        ctx,
        call,
        platform,
        missing,
        `"${platform}" was added without its ${label}`,
      ).catch((error) => {
        throw new ToolError(
          `"${platform}" is added, without its ${label}: ${
            messageOf(error)
          } (authenticate asks again where it is needed)`,
        );
      });
      if (asked.saved) current = await ctx.auth.require(platform);
      else page = asked.page;
    }
    return json({
      ...publicView(current),
      ...(page === undefined ? {} : {
        ...page,
        note:
          `Ask the person to open enter_secret_at and enter the ${
            missing === "api_key" ? "API key" : "client secret"
          } there (agentd's own page, never the chat); it is saved once checked ` +
          `(an API key by its probe, a client-credentials secret by a grant).`,
      }),
      replaced: existing !== undefined,
      ...(moved.length > 0
        ? {
          tokens_dropped: true,
          note:
            `The stored tokens of "${platform}" were deleted because its ${
              moved.join(", ")
            } changed (tokens belong to the client and endpoints that issued them). ` +
            "Call authenticate to get new ones.",
        }
        : {}),
    });
  },
});

/** Settings that say who issues, receives or checks this platform's credentials. */
const PROVIDER_FIELDS = [...ENDPOINTS, "client_id"] as const;

/**
 * What changed about the provider or client between the stored platform and
 * its replacement (empty: the same provider and client, tokens stay).
 */
async function providerChanges(
  ctx: PlatformAuthContext,
  existing: PlatformRecord,
  next: {
    grant: Grant;
    settings: PlatformRecord["settings"];
    client_secret: string | undefined;
  },
): Promise<string[]> {
  const changed: string[] = [];
  if (existing.grant !== next.grant) changed.push("grant");
  for (const field of PROVIDER_FIELDS) {
    if (existing.settings[field] !== next.settings[field]) changed.push(field);
  }
  if (
    existing.settings.api_key_probe?.url !== next.settings.api_key_probe?.url
  ) {
    changed.push("api_key_probe.url");
  }
  const before = existing.sealed.client_secret === undefined
    ? undefined
    : await ctx.auth.vault.unseal(
      existing.name,
      "client_secret",
      existing.sealed.client_secret,
    ).catch(() => ""); // unreadable: count it as changed
  if (before !== next.client_secret) changed.push("client_secret");
  return changed;
}

export const removePlatform = tool({
  name: "remove_platform",
  title: "Remove platform",
  touches: ["credentials"],
  description:
    "Remove a platform and its stored tokens from this server (tokens are not revoked at the provider: call revoke_token first for that).",
  input: z.object({ platform: PlatformName }),
  output: z.object({ platform: z.string(), removed: z.literal(true) }),
  annotations: { destructiveHint: true, idempotentHint: false },
  async handle(ctx, { platform }) {
    await ctx.auth.require(platform);
    await ctx.auth.lock(platform).run(async () => {
      ctx.auth.forget(platform);
      await ctx.auth.vault.removePlatform(platform);
    });
    ctx.auth.audit(platform, "revoke", "platform_removed");
    return json({ platform, removed: true });
  },
});
