// Refresh failures and expiries reach the operator (issue 34, item 5): a
// refresh that fails on the network past the token's expiry, and a token
// without a refresh token reaching its expiry, turn the platform
// auth_required / expired with an alert (log line, webhook, /health), with no
// tool call needed; the platform working again clears it.

import assert from "node:assert/strict";
import { waitFor } from "../../helpers.ts";
import { ManualClock } from "../../../tools/platform-auth/clock.ts";
import {
  assertLogsFree,
  type AuthHarness,
  callbackListener,
  connect,
  startAuth,
  webhookSink,
} from "./harness.ts";
import { startMockServer } from "./providers.ts";

type Alert = Record<string, unknown>;

function alertNamed(all: Alert[], name: string): Alert | undefined {
  return all.find((alert) => alert.alert === name);
}

async function platformHealth(auth: AuthHarness, platform: string) {
  const health = await auth.host.health();
  const details = JSON.parse(JSON.stringify(health.details ?? {}));
  return { degraded: health.degraded === true, ...details.platforms[platform] };
}

Deno.test("platform-auth: a refresh failing on the network past expiry → auth_required + alert; the provider back clears it by itself", async () => {
  const mock = await startMockServer();
  const callback = callbackListener();
  const webhook = webhookSink();
  const clock = new ManualClock();
  const auth = await startAuth({
    clock,
    callback,
    config: { alert_webhook: webhook.url, refresh_retries: 2 },
  });
  const seen = [auth.key];
  try {
    await auth.ok("add_platform", {
      platform: "flaky",
      config: { issuer: mock.issuer, client_id: "flakyclient" },
    });
    seen.push(await connect(auth, "flaky"));
    seen.push(
      String((await auth.ok("get_token", { platform: "flaky" })).access_token),
    );

    // The provider goes away and the token expires: the scheduled refresh finds nobody.
    await mock.down();
    clock.advance(3_600_000 + 1_000);
    const raised = await waitFor(
      () => webhook.received,
      (all) => alertNamed(all, "auth_required") !== undefined,
    );
    const alert = alertNamed(raised, "auth_required");
    assert.equal(alert?.platform, "flaky");
    assert.match(String(alert?.reason), /cannot reach the provider/);
    const status = await auth.ok("get_auth_status", { platform: "flaky" });
    assert.equal(status.status, "auth_required");
    assert.match(String(status.reason), /expired.*retried every \d+ s/);
    const sick = await platformHealth(auth, "flaky");
    assert.equal(sick.degraded, true);
    assert.equal(sick.status, "auth_required");
    assert.equal(sick.alert, "auth_required");
    assert.ok(
      auth.lines.some((line) =>
        line.includes('"event":"alert"') &&
        line.includes('"alert":"auth_required"') && line.includes("flaky")
      ),
      "an alert log line",
    );
    await auth.fails(
      "get_token",
      { platform: "flaky" },
      /Cannot refresh "flaky".*auth_required until the provider answers again/,
    );

    // The provider is back: the daemon's own retries find it; nobody calls a tool that refreshes.
    await mock.up();
    await waitFor(
      async () => {
        clock.advance(5_000);
        return (await auth.ok("get_auth_status", { platform: "flaky" }))
          .status;
      },
      (now) => now === "active",
    );
    const recovered = await waitFor(
      () => webhook.received,
      (all) => alertNamed(all, "auth_recovered") !== undefined,
    );
    assert.equal(
      alertNamed(recovered, "auth_recovered")?.cleared,
      "auth_required",
    );
    const healthy = await platformHealth(auth, "flaky");
    assert.equal(healthy.degraded, false);
    assert.equal(healthy.alert, null);
    seen.push(
      String((await auth.ok("get_token", { platform: "flaky" })).access_token),
    );
    assert.equal(
      webhook.received.filter((each) => each.alert === "auth_required").length,
      1,
      "retries that keep failing do not alert again",
    );
  } finally {
    await auth.close();
    await webhook.close();
    await callback.close();
    await mock.close();
  }
  assertLogsFree(auth.lines, seen);
  assertLogsFree(webhook.received.map((each) => JSON.stringify(each)), seen);
});

Deno.test("platform-auth: a token without refresh token works until its expiry, then is expired + alert with no call; authenticating clears it", async () => {
  const mock = await startMockServer();
  const callback = callbackListener();
  const webhook = webhookSink();
  const clock = new ManualClock();
  const auth = await startAuth({
    clock,
    callback,
    config: { alert_webhook: webhook.url },
  });
  // The first code exchange gets no refresh token (as GitHub OAuth apps, for one, answer).
  let withoutRefresh = true;
  mock.server.service.on("beforeResponse", (response, request) => {
    if (
      withoutRefresh && request.body?.grant_type === "authorization_code"
    ) {
      withoutRefresh = false;
      Reflect.deleteProperty(response.body, "refresh_token");
    }
  });
  const seen = [auth.key];
  try {
    await auth.ok("add_platform", {
      platform: "once",
      config: { issuer: mock.issuer, client_id: "onceclient" },
    });
    seen.push(await connect(auth, "once"));
    const first = await auth.ok("get_auth_status", { platform: "once" });
    assert.equal(first.has_refresh_token, false);

    // Inside the refresh margin: nothing can renew it, but it still works.
    clock.advance(3_600_000 - 300_000 + 1_000);
    const token = await auth.ok("get_token", { platform: "once" });
    seen.push(String(token.access_token));
    assert.equal(
      (await auth.ok("get_auth_status", { platform: "once" })).status,
      "active",
    );

    // Its expiry passes and nobody calls: the operator hears of it.
    clock.advance(300_000);
    const raised = await waitFor(
      () => webhook.received,
      (all) => alertNamed(all, "expired") !== undefined,
    );
    const alert = alertNamed(raised, "expired");
    assert.equal(alert?.platform, "once");
    assert.match(String(alert?.reason), /no refresh token.*authenticate/);
    const stored = await auth.ok("get_auth_status", { platform: "once" });
    assert.equal(stored.status, "expired");
    const sick = await platformHealth(auth, "once");
    assert.equal(sick.degraded, true);
    assert.equal(sick.status, "expired");
    assert.equal(sick.alert, "expired");
    assert.ok(
      auth.lines.some((line) =>
        line.includes('"event":"alert"') && line.includes('"alert":"expired"')
      ),
      "an alert log line",
    );
    await auth.fails("get_token", { platform: "once" }, /call authenticate/);

    // Authenticating again clears it.
    seen.push(await connect(auth, "once"));
    const recovered = await waitFor(
      () => webhook.received,
      (all) => alertNamed(all, "auth_recovered") !== undefined,
    );
    assert.equal(alertNamed(recovered, "auth_recovered")?.cleared, "expired");
    const healthy = await platformHealth(auth, "once");
    assert.equal(healthy.status, "active");
    assert.equal(healthy.alert, null);
  } finally {
    await auth.close();
    await webhook.close();
    await callback.close();
    await mock.close();
  }
  assertLogsFree(auth.lines, seen);
});
