// Failures injected with oauth2-mock-server: 50 concurrent get_token during
// a refresh send one refresh request; invalid_grant turns the platform
// auth_required in get_auth_status and /health and raises an alert. Also
// client credentials, JWKS validation of an expired JWT, and api_key probes.

import assert from "node:assert/strict";
import { waitFor } from "../../helpers.ts";
import { ManualClock } from "../../../tools/platform-auth/clock.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import {
  assertLogsFree,
  callbackListener,
  connect,
  startAuth,
  webhookSink,
} from "./harness.ts";
import { startMockServer } from "./providers.ts";

Deno.test("platform-auth: one refresh for 50 concurrent get_token; invalid_grant → auth_required, /health, alert", async () => {
  const mock = await startMockServer();
  const callback = callbackListener();
  const webhook = webhookSink();
  const clock = new ManualClock();
  const auth = await startAuth({
    clock,
    callback,
    config: { alert_webhook: webhook.url },
  });
  const seen = [auth.key, "mock-secret-0123456789"];
  let refreshes = 0;
  mock.server.service.on("beforeResponse", (_response, request) => {
    if (request.body?.grant_type === "refresh_token") refreshes++;
  });
  try {
    await auth.ok("add_platform", {
      platform: "mock",
      config: {
        issuer: mock.issuer,
        client_id: "mockclient",
        client_secret: "mock-secret-0123456789",
        scopes: ["read"],
      },
    });
    seen.push(await connect(auth, "mock"));
    const first = await auth.ok("get_token", { platform: "mock" });
    seen.push(String(first.access_token));
    assert.equal(refreshes, 0);

    // Within the margin: the timer and 50 callers want a refresh; the provider sees one.
    clock.advance(3_600_000 - 300_000 + 1_000);
    const tokens = await Promise.all(
      Array.from(
        { length: 50 },
        () => auth.ok("get_token", { platform: "mock" }),
      ),
    );
    assert.equal(
      refreshes,
      1,
      "exactly one refresh request reached the provider",
    );
    const distinct = new Set(tokens.map((token) => token.access_token));
    assert.equal(distinct.size, 1);
    // (The mock signs the same claims within a second into the same JWT, so compare the audit instead.)
    assert.equal(
      auth.lines.filter((line) =>
        line.includes('"operation":"refresh"') &&
        line.includes('"outcome":"ok"')
      ).length,
      1,
    );
    seen.push(String([...distinct][0]));

    // An expired JWT: the mock offers introspection (active) but the exp claim has passed on our clock.
    clock.advance(2 * 3_600_000);
    // The timer's refresh runs first; the failure below is injected after it.
    await waitFor(() => refreshes, (count) => count === 2);
    const expired = await auth.ok("validate_token", {
      platform: "mock",
      token: String(first.access_token),
    });
    assert.equal(expired.state, "expired");
    assert.equal(expired.valid, false);

    // The provider rejects the refresh token: auth_required, /health degraded, an alert.
    mock.server.service.once("beforeResponse", (response) => {
      response.statusCode = 400;
      response.body = {
        error: "invalid_grant",
        error_description: "refresh token revoked",
      };
    });
    await auth.fails(
      "refresh_token",
      { platform: "mock" },
      /rejected the refresh.*invalid_grant.*auth_required/,
    );
    const status = await auth.ok("get_auth_status", { platform: "mock" });
    assert.equal(status.status, "auth_required");
    assert.match(String(status.reason), /invalid_grant/);
    await auth.fails(
      "get_token",
      { platform: "mock" },
      /needs authentication again/,
    );
    const health = await auth.host.health();
    assert.equal(health.degraded, true);
    assert.deepEqual(
      JSON.parse(JSON.stringify(health.details)).platforms.mock.status,
      "auth_required",
    );
    const alert = await waitFor(
      () => webhook.received,
      (all) => all.length > 0,
    );
    assert.equal(alert[0].alert, "auth_required");
    assert.equal(alert[0].platform, "mock");
    assert.ok(
      auth.lines.some((line) =>
        line.includes('"event":"alert"') && line.includes("auth_required")
      ),
    );
    const metrics = auth.host.metrics().map((metric) => metric.name);
    assert.ok(metrics.includes("agentd_platform_auth_refreshes_total"));

    // Authenticating again clears it.
    seen.push(await connect(auth, "mock"));
    assert.equal(
      (await auth.ok("get_auth_status", { platform: "mock" })).status,
      "active",
    );
  } finally {
    await auth.close();
    await webhook.close();
    await callback.close();
    await mock.close();
  }
  assertLogsFree(auth.lines, seen);
});

Deno.test("platform-auth: client credentials, JWKS validation, api_key probe", async () => {
  const mock = await startMockServer();
  const callback = callbackListener();
  const clock = new ManualClock();
  const apiKey = "key-" + crypto.randomUUID();
  const probe = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) =>
      new Response(null, {
        status: request.headers.get("x-api-key") === apiKey ? 200 : 401,
      }),
  );
  const probeUrl = `http://127.0.0.1:${probe.addr.port}/me`;
  const auth = await startAuth({ clock, callback });
  const seen = [auth.key, apiKey, "m2m-secret-0123456789"];
  try {
    await auth.ok("add_platform", {
      platform: "m2m",
      config: {
        issuer: mock.issuer,
        grant: "client_credentials",
        client_id: "m2m",
        client_secret: "m2m-secret-0123456789",
        scopes: ["jobs"],
      },
    });
    const started = await auth.ok("authenticate", { platform: "m2m" });
    assert.equal(started.status, "active");
    const token = String(
      (await auth.ok("get_token", { platform: "m2m" })).access_token,
    );
    seen.push(token);

    // Explicit endpoints without introspection: a JWT is checked against the JWKS.
    await auth.ok("add_platform", {
      platform: "jwks",
      config: {
        token_endpoint: `${mock.issuer}/token`,
        jwks_uri: `${mock.issuer}/jwks`,
        issuer: mock.issuer,
        grant: "client_credentials",
        client_id: "m2m",
        client_secret: "m2m-secret-0123456789",
      },
    });
    const valid = await auth.ok("validate_token", { platform: "jwks", token });
    assert.deepEqual([valid.state, valid.method], ["valid", "jwks"]);
    const tampered = token.slice(0, -4) +
      (token.endsWith("AAAA") ? "BBBB" : "AAAA");
    assert.equal(
      (await auth.ok("validate_token", { platform: "jwks", token: tampered }))
        .state,
      "invalid",
    );
    clock.advance(2 * 3_600_000);
    assert.equal(
      (await auth.ok("validate_token", { platform: "jwks", token })).state,
      "expired",
    );

    // api_key: stored write-only, validated by its probe.
    await auth.ok("add_platform", {
      platform: "keyed",
      config: {
        api_key: apiKey,
        api_key_probe: { url: probeUrl, header: "x-api-key", prefix: "" },
      },
    });
    const listed = JSON.stringify(await auth.ok("list_platforms"));
    assert.ok(!listed.includes(apiKey));
    assert.equal(
      (await auth.ok("authenticate", { platform: "keyed", method: "api_key" }))
        .status,
      "active",
    );
    assert.equal(
      (await auth.ok("get_token", { platform: "keyed" })).access_token,
      apiKey,
    );
    assert.equal(
      (await auth.ok("validate_token", { platform: "keyed", token: apiKey }))
        .state,
      "valid",
    );
    assert.equal(
      (await auth.ok("validate_token", {
        platform: "keyed",
        token: "wrong-key-123",
      })).state,
      "invalid",
    );
    await auth.fails(
      "authenticate",
      { platform: "keyed", method: "oauth" },
      /api_key platform/,
    );
    await auth.ok("add_platform", {
      platform: "badkey",
      config: {
        api_key: "not-the-key-123",
        api_key_probe: { url: probeUrl, header: "x-api-key", prefix: "" },
      },
    });
    seen.push("not-the-key-123");
    await auth.fails(
      "authenticate",
      { platform: "badkey", method: "api_key" },
      /refused by its probe.*401/,
    );
    assert.equal(
      (await auth.ok("get_auth_status", { platform: "badkey" })).status,
      "auth_required",
    );
  } finally {
    await auth.close();
    await probe.shutdown();
    await callback.close();
    await mock.close();
  }
  assertLogsFree(auth.lines, seen);
});

Deno.test("platform-auth without an HTTP listener: a loopback redirect of its own (RFC 8252)", async () => {
  const mock = await startMockServer();
  const callback = callbackListener();
  const auth = await startAuth({
    clock: new ManualClock(),
    callback,
    noAddress: true,
  });
  try {
    await auth.ok("add_platform", {
      platform: "cli",
      config: { issuer: mock.issuer, client_id: "cliclient" },
    });
    const started = await auth.ok("authenticate", { platform: "cli" });
    const redirectUri = new URL(String(started.redirect_uri));
    assert.equal(redirectUri.hostname, "127.0.0.1");
    assert.notEqual(redirectUri.origin, new URL(auth.callbackUrl).origin);
    const redirect = await fetch(String(started.authorization_url), {
      redirect: "manual",
    });
    await redirect.body?.cancel();
    const location = redirect.headers.get("location") ?? "";
    assert.ok(location.startsWith(redirectUri.href), location);
    const landed = await fetch(location);
    assert.equal(landed.status, 200);
    assert.match(await landed.text(), /"cli" is connected/);
    assert.equal(
      (await auth.ok("get_auth_status", { platform: "cli" })).status,
      "active",
    );
  } finally {
    await auth.close();
    await callback.close();
    await mock.close();
  }
});

Deno.test("platform-auth: a provider that is down is retried with backoff, and the platform stays active", async () => {
  const mock = await startMockServer();
  const callback = callbackListener();
  const auth = await startAuth({
    clock: new ManualClock(),
    callback,
    config: { refresh_retries: 2 },
  });
  try {
    await auth.ok("add_platform", {
      platform: "flaky",
      config: { issuer: mock.issuer, client_id: "flakyclient" },
    });
    await connect(auth, "flaky");
    await mock.close();
    await auth.fails(
      "refresh_token",
      { platform: "flaky" },
      /Cannot refresh "flaky".*tried 3 times/,
    );
    const retries = auth.lines.filter((line) =>
      line.includes('"platform":"flaky"') && line.includes('"outcome":"retry"')
    );
    assert.equal(retries.length, 3);
    const status = await auth.ok("get_auth_status", { platform: "flaky" });
    assert.equal(
      status.status,
      "active",
      "a network failure is not auth_required",
    );
  } finally {
    await auth.close();
    await callback.close();
  }
});

Deno.test("platform-auth start: tokens past due are refreshed at once; another key is an Error phase", async () => {
  const mock = await startMockServer();
  const callback = callbackListener();
  const clock = new ManualClock();
  const store = new MemoryStore();
  let refreshes = 0;
  mock.server.service.on("beforeResponse", (_response, request) => {
    if (request.body?.grant_type === "refresh_token") refreshes++;
  });
  const first = await startAuth({ clock, callback, store });
  try {
    await first.ok("add_platform", {
      platform: "kept",
      config: { issuer: mock.issuer, client_id: "keptclient" },
    });
    await connect(first, "kept");
    await first.host.stop(5_000);
    clock.advance(2 * 3_600_000);
    assert.equal(refreshes, 0, "no timer runs after stop");

    const second = await startAuth({ clock, callback, store, key: first.key });
    try {
      await waitFor(() => refreshes, (count) => count === 1);
      const status = await second.ok("get_auth_status", { platform: "kept" });
      assert.equal(status.status, "active");
      assert.ok(Number(status.expires_in_s) > 3000);
    } finally {
      await second.close();
    }

    const third = await startAuth({ clock, callback, store });
    try {
      assert.equal(third.host.phase.phase, "error");
      assert.match(third.host.phase.state.error ?? "", /cannot be unsealed/);
    } finally {
      await third.close();
    }
  } finally {
    await first.close();
    await callback.close();
    await mock.close();
  }
});

Deno.test("platform-auth catalogue: a well-known platform completed with a client id", async () => {
  const callback = callbackListener();
  const auth = await startAuth({ clock: new ManualClock(), callback });
  try {
    const added = await auth.ok("add_platform", {
      platform: "github",
      config: { client_id: "Iv1.test" },
    });
    const settings = added.settings as Record<string, unknown>;
    assert.equal(
      settings.token_endpoint,
      "https://github.com/login/oauth/access_token",
    );
    assert.deepEqual(settings.scopes, ["repo", "read:user"]);
    const started = await auth.ok("authenticate", { platform: "github" });
    const url = new URL(String(started.authorization_url));
    assert.equal(
      url.origin + url.pathname,
      "https://github.com/login/oauth/authorize",
    );
    assert.equal(url.searchParams.get("client_id"), "Iv1.test");
    assert.equal(url.searchParams.get("scope"), "repo read:user");
    assert.equal(url.searchParams.get("code_challenge_method"), "S256");
    await auth.fails(
      "add_platform",
      { platform: "mine", config: { preset: "nope", client_id: "x" } },
      /Unknown preset "nope"/,
    );
    // api_key platforms: revoked here means get_token refuses the key.
    await auth.ok("add_platform", {
      platform: "keyonly",
      config: {
        api_key: "k-0123456789",
        api_key_probe: { url: "https://api.example.com/me" },
      },
    });
    await auth.ok("revoke_token", { platform: "keyonly" });
    await auth.fails(
      "get_token",
      { platform: "keyonly" },
      /no working API key/,
    );
  } finally {
    await auth.close();
    await callback.close();
  }
});
