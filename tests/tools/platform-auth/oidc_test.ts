// The full authorization-code + PKCE flow against oidc-provider, driven
// through the tools, with its login and consent pages completed in headless
// Chromium; refresh on a moved clock, revocation, validation, state abuse,
// the device flow, and a log free of every secret the test saw.

import assert from "node:assert/strict";
import { browserTestIgnore, launchChromium } from "../../browser.ts";
import { waitFor } from "../../helpers.ts";
import {
  ManualClock,
  systemClock,
} from "../../../tools/platform-auth/clock.ts";
import { Vault } from "../../../tools/platform-auth/vault.ts";
import { decodeBase64 } from "../../../platform/base64.ts";
import {
  assertLogsFree,
  callbackListener,
  snapshot,
  startAuth,
} from "./harness.ts";
import { consentInBrowser, startOidcProvider } from "./providers.ts";

async function importKey(base64: string): Promise<CryptoKey> {
  return await crypto.subtle.importKey(
    "raw",
    decodeBase64(base64),
    { name: "AES-GCM" },
    false,
    [
      "encrypt",
      "decrypt",
    ],
  );
}

/** RFC 7662 straight at the provider: what it thinks of a token. */
async function introspectAtProvider(
  issuer: string,
  clientId: string,
  secret: string,
  token: string,
): Promise<boolean> {
  const discovery =
    await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const response = await fetch(discovery.introspection_endpoint, {
    method: "POST",
    headers: {
      authorization: `Basic ${btoa(`${clientId}:${secret}`)}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ token }),
  });
  const body = await response.json();
  return body.active === true;
}

Deno.test({
  name:
    "platform-auth: code + PKCE with oidc-provider in Chromium, refresh, revoke, validate, state abuse",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const callback = callbackListener();
    const oidc = await startOidcProvider([callback.url]);
    const clock = new ManualClock();
    const auth = await startAuth({ clock, callback });
    const browser = await launchChromium();
    const seen: string[] = [auth.key, ...Object.values(oidc.secrets)];
    try {
      assert.equal(
        auth.host.phase.phase,
        "running",
        auth.host.phase.state.error,
      );
      const added = await auth.ok("add_platform", {
        platform: "acme",
        config: {
          issuer: oidc.issuer,
          client_id: "agentd-web",
          client_secret: oidc.secrets["agentd-web"],
          scopes: ["openid", "profile"],
        },
      });
      assert.equal(added.client_secret, "set (write-only)");
      assert.ok(!JSON.stringify(added).includes(oidc.secrets["agentd-web"]));
      await auth.ok("add_platform", {
        platform: "other",
        config: {
          issuer: oidc.issuer,
          client_id: "agentd-other",
          client_secret: oidc.secrets["agentd-other"],
          scopes: ["openid"],
        },
      });
      // Bad input: a clear error, nothing stored.
      const before = await snapshot(auth.store);
      await auth.fails(
        "add_platform",
        { platform: "Bad Name", config: {} },
        /platform/,
      );
      await auth.fails("add_platform", {
        platform: "x",
        config: { issuer: oidc.issuer },
      }, /client_id/);
      await auth.fails(
        "add_platform",
        {
          platform: "x",
          config: { issuer: "http://example.com", client_id: "a" },
        },
        /https/,
      );
      await auth.fails(
        "add_platform",
        { platform: "x", config: { bogus: 1 } },
        /bogus/,
      );
      await auth.fails("get_token", { platform: "nope" }, /No platform "nope"/);
      assert.equal(await snapshot(auth.store), before);

      // authenticate → URL with PKCE S256 and a state; consent in Chromium; the redirect completes it.
      const started = await auth.ok("authenticate", {
        platform: "acme",
        method: "oauth",
      });
      const url = new URL(String(started.authorization_url));
      assert.equal(url.searchParams.get("code_challenge_method"), "S256");
      assert.equal(url.searchParams.get("redirect_uri"), auth.callbackUrl);
      const firstState = url.searchParams.get("state") ?? "";
      assert.ok(firstState.length >= 32);
      const page = await consentInBrowser(
        browser,
        url.href,
        (at) => at.url().startsWith(auth.callbackUrl),
      );
      seen.push(new URL(page.url()).searchParams.get("code") ?? "");
      assert.match(
        await page.$eval("#message", (node) => node.textContent ?? ""),
        /"acme" is connected/,
      );
      await page.close();

      const status = await auth.ok("get_auth_status", { platform: "acme" });
      assert.equal(status.status, "active");
      assert.equal(status.has_refresh_token, true);

      const token = await auth.ok("get_token", { platform: "acme" });
      const access = String(token.access_token);
      seen.push(access);
      assert.ok(
        await introspectAtProvider(
          oidc.issuer,
          "agentd-web",
          oidc.secrets["agentd-web"],
          access,
        ),
      );
      const valid = await auth.ok("validate_token", {
        platform: "acme",
        token: access,
      });
      assert.equal(valid.state, "valid");
      assert.equal(valid.method, "introspection");

      // Replay of a used state, an unknown state, a callback without a flow: refused, nothing stored.
      const quiet = await snapshot(auth.store);
      await auth.fails(
        "oauth_callback",
        { code: "abc", state: firstState },
        /already used/,
      );
      await auth.fails(
        "oauth_callback",
        { code: "abc", state: "not-a-state" },
        /Unknown or already used/,
      );
      const stray = await fetch(
        `${auth.callbackUrl}?code=abc&state=${firstState}`,
      );
      assert.equal(stray.status, 400);
      assert.match(await stray.text(), /already used/);
      assert.equal(await snapshot(auth.store), quiet);

      // A code issued to acme's client, presented with other's state: the provider refuses it.
      const otherStart = await auth.ok("authenticate", { platform: "other" });
      const otherState =
        new URL(String(otherStart.authorization_url)).searchParams.get(
          "state",
        ) ?? "";
      const acmeStart = await auth.ok("authenticate", { platform: "acme" });
      let stolen = "";
      const intercepted = await consentInBrowser(
        browser,
        String(acmeStart.authorization_url),
        () => stolen !== "",
        (at) => {
          if (!at.startsWith(auth.callbackUrl)) return false;
          stolen = new URL(at).searchParams.get("code") ?? "";
          return true;
        },
      );
      seen.push(stolen);
      const calm = await snapshot(auth.store);
      await auth.fails(
        "oauth_callback",
        { code: stolen, state: otherState },
        /nothing was stored/,
      );
      assert.equal(
        (await auth.ok("get_auth_status", { platform: "other" })).status,
        "not_authenticated",
      );
      assert.equal(await snapshot(auth.store), calm);

      // An expired state.
      const late = await auth.ok("authenticate", { platform: "other" });
      const lateState =
        new URL(String(late.authorization_url)).searchParams.get("state") ?? "";
      clock.advance(601_000);
      await auth.fails(
        "oauth_callback",
        { code: "abc", state: lateState },
        /expired/,
      );

      // Time moves to the refresh margin: the scheduler refreshes, the rotated refresh token is saved first.
      const { vault } = await Vault.open(
        auth.store,
        await importKey(auth.key),
        { init: false, now: clock.now() },
      );
      const beforeRefresh = await vault.token("acme");
      assert.ok(beforeRefresh?.refresh_token);
      seen.push(beforeRefresh.refresh_token);
      clock.advance(3_600_000 - 300_000 - 601_000 + 1_000);
      const afterRefresh = await waitFor(
        () => vault.token("acme"),
        (current) => current?.access_token !== beforeRefresh.access_token,
      );
      assert.ok(afterRefresh?.refresh_token);
      seen.push(afterRefresh.access_token, afterRefresh.refresh_token);
      assert.notEqual(
        afterRefresh.refresh_token,
        beforeRefresh.refresh_token,
        "rotated",
      );
      assert.ok(
        await introspectAtProvider(
          oidc.issuer,
          "agentd-web",
          oidc.secrets["agentd-web"],
          afterRefresh.access_token,
        ),
      );
      const fresh = await auth.ok("get_token", { platform: "acme" });
      assert.equal(fresh.access_token, afterRefresh.access_token);
      // The saved (rotated) refresh token is the one that works now.
      const onDemand = await auth.ok("refresh_token", { platform: "acme" });
      assert.equal(onDemand.refreshed, true);
      assert.ok(!("access_token" in onDemand));
      const current = await vault.token("acme");
      assert.ok(current);
      seen.push(current.access_token, current.refresh_token ?? "");

      // Revocation at the provider; validate_token then says revoked.
      const revoked = await auth.ok("revoke_token", { platform: "acme" });
      assert.equal(revoked.at_provider, true);
      assert.equal(
        await introspectAtProvider(
          oidc.issuer,
          "agentd-web",
          oidc.secrets["agentd-web"],
          current.access_token,
        ),
        false,
      );
      const afterRevoke = await auth.ok("validate_token", {
        platform: "acme",
        token: current.access_token,
      });
      assert.equal(afterRevoke.state, "revoked");
      assert.equal(
        (await auth.ok("get_auth_status", { platform: "acme" })).status,
        "revoked",
      );
      await auth.fails("get_token", { platform: "acme" }, /no token/);

      // list and remove; no secret in any listing.
      const listed = await auth.ok("list_platforms");
      assert.equal(listed.count, 2);
      for (const secret of Object.values(oidc.secrets)) {
        assert.ok(!JSON.stringify(listed).includes(secret));
      }
      await auth.ok("remove_platform", { platform: "other" });
      assert.deepEqual(
        ((await auth.ok("list_platforms")).platforms as { platform: string }[])
          .map((each) => each.platform),
        ["acme"],
      );
      await auth.fails("remove_platform", { platform: "other" }, /No platform/);
      await intercepted.close();
    } finally {
      await browser.close();
      await auth.close();
      await oidc.close();
      await callback.close();
    }
    assert.ok(auth.lines.some((line) => line.includes('"token_operation"')));
    assertLogsFree(auth.lines, seen);
  },
});

Deno.test({
  name: "platform-auth: the device flow end to end with oidc-provider",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const callback = callbackListener();
    const oidc = await startOidcProvider([callback.url]);
    const auth = await startAuth({ clock: systemClock, callback });
    const browser = await launchChromium();
    try {
      await auth.ok("add_platform", {
        platform: "tv",
        config: {
          issuer: oidc.issuer,
          grant: "device_code",
          client_id: "agentd-device",
          client_secret: oidc.secrets["agentd-device"],
          scopes: ["openid"],
        },
      });
      const started = await auth.ok("authenticate", { platform: "tv" });
      assert.equal(started.status, "pending");
      assert.equal(typeof started.user_code, "string");
      assert.equal(
        (await auth.ok("get_auth_status", { platform: "tv" })).status,
        "pending",
      );
      const page = await consentInBrowser(
        browser,
        String(started.verification_uri_complete),
        async (at) => (await at.content()).includes("Sign-in Success"),
      );
      await page.close();
      const active = await waitFor(
        () => auth.ok("get_auth_status", { platform: "tv" }),
        (status) => status.status === "active",
        30_000,
      );
      assert.equal(active.has_refresh_token, true);
      const token = await auth.ok("get_token", { platform: "tv" });
      assert.ok(
        await introspectAtProvider(
          oidc.issuer,
          "agentd-device",
          oidc.secrets["agentd-device"],
          String(token.access_token),
        ),
      );
      assertLogsFree(auth.lines, [
        auth.key,
        String(token.access_token),
        ...Object.values(oidc.secrets),
      ]);
    } finally {
      await browser.close();
      await auth.close();
      await oidc.close();
      await callback.close();
    }
  },
});
