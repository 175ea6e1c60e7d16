// The platform auth server (svc-platform-auth): OAuth 2.0 / OIDC flows,
// API keys, an encrypted credential store and tokens refreshed before they
// expire, so agents and other servers never implement authentication.

import { defineServer, gatherTools } from "../kit/mod.ts";
import { TOOL_LISTINGS } from "./tool_listings.ts";
import type { Metric } from "../../platform/metrics.ts";
import { openSecrets } from "../../platform/secrets.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { createAlerts } from "./alerts.ts";
import * as authentication from "./authentication_tools.ts";
import { Authorizations } from "./authorization.ts";
import { BrowserPages, PAGE_PATH } from "./browser_pages.ts";
import type { BrowserRequest, CallbackOutcome } from "../kit/mod.ts";
import {
  type LoopbackReceiver,
  startLoopbackReceiver,
} from "./oauth_loopback.ts";
import { type Clock, systemClock } from "./clock.ts";
import { PlatformAuthConfig } from "./config.ts";
import { type PlatformAuthContext, statusView } from "./context.ts";
import * as platforms from "./platform_tools.ts";
import { PlatformAuth } from "./service.ts";
import * as tokens from "./token_tools.ts";
import { Vault } from "./vault.ts";

export { PlatformAuthConfig };

/** tools/list order (tests/tools/platform-auth/seed_test.ts pins it); name every tool here. */
const ORDER = [
  "authenticate",
  "get_token",
  "refresh_token",
  "revoke_token",
  "list_platforms",
  "add_platform",
  "remove_platform",
  "get_auth_status",
  "oauth_callback",
  "validate_token",
];

/** Where the daemon's HTTP face takes providers' redirects for this server. */
const CALLBACK_PATH = "/oauth/callback";

/** The spec; tests give their own clock to move time. */
export function createPlatformAuthServer(options: { clock?: Clock } = {}) {
  const clock = options.clock ?? systemClock;
  return defineServer<PlatformAuthContext>({
    id: "platform-auth",
    namespace: "svc-platform-auth",
    title: "Platform auth",
    version: "1.0.0",
    instructions:
      "Holds credentials for other platforms so agents need not implement authentication. add_platform " +
      "(issuer or endpoints, client id/secret, scopes; or an api_key with a probe), then authenticate (returns " +
      "a URL to open, a device code, or a token at once), then get_token whenever a token is needed: it is " +
      "refreshed before expiry. get_auth_status says auth_required when the platform must be authenticated again.",
    config: PlatformAuthConfig,
    listings: TOOL_LISTINGS, // tools/list entries, generated: tools/tool_listings.ts
    tools: gatherTools(ORDER, {
      authentication,
      token: tokens,
      platform: platforms,
    }),
    callbacks: {
      [CALLBACK_PATH]: {
        answer: (context, params) => redirectOutcome(context, params),
      },
      // The secret and consent pages of URL elicitation (browser_pages.ts).
      [PAGE_PATH]: {
        form: true,
        answer: (context, params, browser) =>
          context.pages.answer(browser, params),
      },
    },
    async start(deps) {
      const config = PlatformAuthConfig.parse(deps.config);
      const secrets = await openSecrets({
        env: deps.env,
        dataDir: deps.dataDir,
        keychain: config.keychain === "auto",
      });
      const { vault, created } = await Vault.open(deps.store, secrets.dataKey, {
        init: config.init_store,
        now: clock.now(),
      });
      const alerts = createAlerts({
        log: deps.log,
        webhook: config.alert_webhook,
        timeoutMs: config.http_timeout_ms,
        now: () => clock.now(),
      });
      const auth = new PlatformAuth(
        vault,
        config,
        deps.log,
        clock,
        alerts,
        secrets.source,
      );
      await auth.load();
      // Without an HTTP face (stdio), one loopback listener of our own serves
      // the redirect and the pages, started on first use (RFC 8252 §7.3).
      let loopback: LoopbackReceiver | undefined;
      const local = () =>
        loopback ??= startLoopbackReceiver({
          [CALLBACK_PATH]: {
            answer: (params) => redirectOutcome(context, params),
          },
          [PAGE_PATH]: {
            form: true,
            answer: (params, browser: BrowserRequest) =>
              context.pages.answer(browser, params),
          },
        });
      const flows = new Authorizations(
        auth,
        () =>
          config.redirect_uri ??
            (deps.address() === undefined
              ? undefined
              : `${deps.address()}${CALLBACK_PATH}`),
        () => `${local().origin}${CALLBACK_PATH}`,
      );
      const pages = new BrowserPages(
        clock,
        () => config.state_ttl_s * 1000,
        () => deps.address() ?? local().origin,
      );
      const context: PlatformAuthContext = { auth, flows, pages };
      const platforms = await vault.platforms();
      deps.log.info("platform_auth_ready", {
        store: created ? "created" : "opened",
        key_source: secrets.source,
        platforms: platforms.length,
        scheduled: auth.expiries.size,
      });
      return {
        context,
        health: () => health(context),
        metrics: () => metrics(auth),
        async stop() {
          pages.stop();
          flows.stop();
          await loopback?.close();
          await auth.stop();
        },
      };
    },
  });
}

export const platformAuthServer = createPlatformAuthServer();

/** The page after a provider's redirect: connected, or why not. */
async function redirectOutcome(
  context: PlatformAuthContext,
  params: URLSearchParams,
): Promise<CallbackOutcome> {
  const outcome = await context.flows.answer(params);
  return {
    ok: outcome.ok,
    title: outcome.ok ? "Connected" : "Authorization failed",
    message: outcome.message,
  };
}

async function health(
  ctx: PlatformAuthContext,
): Promise<{ [key: string]: JsonValue }> {
  const platforms: { [key: string]: JsonValue } = {};
  let attention = 0;
  const needing: string[] = [];
  for (const record of await ctx.auth.vault.platforms()) {
    const view = await statusView(ctx, record);
    if (view.status === "auth_required" || view.status === "expired") {
      attention++;
      needing.push(`${record.name} ${view.status.replace("_", " ")}`);
    }
    platforms[record.name] = {
      status: view.status,
      grant: view.grant,
      reason: view.reason,
      alert: ctx.auth.alerts.open(record.name) ?? null,
      expires_at: view.expires_at,
      expires_in_s: view.expires_in_s,
    };
  }
  const count = Object.keys(platforms).length;
  return {
    status: attention > 0 ? "degraded" : "ok",
    // The dashboard's one line for this server: which platforms need a person.
    summary: count === 0
      ? "no platforms connected"
      : `${count} ${count === 1 ? "platform" : "platforms"} · ` +
        (needing.length === 0
          ? "none needs attention"
          : `needs attention: ${needing.join(", ")}`),
    key_source: ctx.auth.keySource,
    platforms,
    needs_attention: attention,
    pending_authorizations: ctx.flows.pendingCount,
    open_pages: ctx.pages.openCount,
  };
}

function metrics(auth: PlatformAuth): Metric[] {
  const split = (labels: string) => labels.split("\u0000");
  const now = auth.clock.now();
  return [
    {
      name: "agentd_platform_auth_refreshes_total",
      help: "Token refreshes by platform and outcome (ok, rejected, failed)",
      type: "counter",
      samples: [...auth.counters.refreshes].map(([labels, value]) => {
        const [platform, outcome] = split(labels);
        return { labels: { platform, outcome }, value };
      }),
    },
    {
      name: "agentd_platform_auth_failures_total",
      help: "Failed token operations by platform and reason",
      type: "counter",
      samples: [...auth.counters.failures].map(([labels, value]) => {
        const [platform, reason] = split(labels);
        return { labels: { platform, reason }, value };
      }),
    },
    {
      name: "agentd_platform_auth_token_expiry_seconds",
      help: "Seconds until each platform's access token expires",
      type: "gauge",
      samples: [...auth.expiries].map(([platform, at]) => ({
        labels: { platform },
        value: Math.round((at - now) / 1000),
      })),
    },
  ];
}
