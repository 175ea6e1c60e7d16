// Issue 33 row 6: credentials follow their provider. Replacing a platform
// with add_platform and pointing its token endpoint (or its client) elsewhere
// must not carry the stored tokens along: the stored refresh token would be
// posted to a URL the caller chose. The real platform-auth server over an
// MCP client, the local OAuth mock the platform-auth tests use, and a
// "collector" token endpoint that records whatever reaches it.

import assert from "node:assert/strict";
import { ManualClock } from "../../tools/platform-auth/clock.ts";
import { callbackListener, startAuth } from "../tools/platform-auth/harness.ts";
import { startMockServer } from "../tools/platform-auth/providers.ts";

/** The browserless code flow: the mock authorizes at once. */
async function connect(
  auth: Awaited<ReturnType<typeof startAuth>>,
  platform: string,
): Promise<void> {
  const started = await auth.ok("authenticate", { platform });
  const response = await fetch(String(started.authorization_url), {
    redirect: "manual",
  });
  await response.body?.cancel();
  const location = new URL(response.headers.get("location") ?? "");
  await auth.ok("oauth_callback", {
    code: location.searchParams.get("code") ?? "",
    state: location.searchParams.get("state") ?? "",
  });
}

/** A token endpoint of the caller's choosing: it records every body it gets. */
function collector() {
  const bodies: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      bodies.push(await request.text());
      return Response.json({ error: "invalid_grant" }, { status: 400 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/token`,
    bodies,
    close: () => server.shutdown(),
  };
}

Deno.test("security: add_platform that moves a platform's token endpoint or client drops its stored tokens", async () => {
  const mock = await startMockServer();
  const callback = callbackListener();
  const clock = new ManualClock();
  const auth = await startAuth({ clock, callback });
  const evil = collector();
  try {
    const legit = {
      issuer: mock.issuer,
      client_id: "mockclient",
      client_secret: "mock-secret-0123456789",
      scopes: ["read"],
    };
    await auth.ok("add_platform", { platform: "mock", config: legit });
    await connect(auth, "mock");
    const before = await auth.ok("get_auth_status", { platform: "mock" });
    assert.equal(before.status, "active");
    assert.equal(before.has_refresh_token, true);

    // Same client, same scopes: only the token endpoint moves.
    const moved = await auth.ok("add_platform", {
      platform: "mock",
      config: {
        authorization_endpoint: `${mock.issuer}/authorize`,
        token_endpoint: evil.url,
        client_id: "mockclient",
        client_secret: "mock-secret-0123456789",
        scopes: ["read"],
      },
    });
    assert.equal(moved.replaced, true);
    assert.equal(moved.tokens_dropped, true, JSON.stringify(moved));
    assert.match(String(moved.note), /token_endpoint/);
    const dropped = await auth.ok("get_auth_status", { platform: "mock" });
    assert.equal(dropped.status, "not_authenticated");

    // Neither an explicit refresh, nor get_token, nor the refresh timer sends
    // the old refresh token to the new endpoint.
    const refresh = await auth.call("refresh_token", { platform: "mock" });
    assert.equal(refresh.isError, true, refresh.text);
    const token = await auth.call("get_token", { platform: "mock" });
    assert.equal(token.isError, true, token.text);
    clock.advance(2 * 3_600_000);
    await auth.ok("list_platforms");
    assert.deepEqual(
      evil.bodies.filter((body) => body.includes("refresh_token")),
      [],
      "the stored refresh token never reached the new endpoint",
    );
    const after = await auth.ok("get_auth_status", { platform: "mock" });
    assert.notEqual(after.status, "active");
    assert.equal(after.has_refresh_token ?? false, false);

    // A new client (another client_id, or secret) at the same provider: the
    // same rule. Scopes alone leave the tokens where they are.
    await auth.ok("add_platform", { platform: "mock", config: legit });
    await connect(auth, "mock");
    const rescoped = await auth.ok("add_platform", {
      platform: "mock",
      config: { ...legit, scopes: ["read", "write"] },
    });
    assert.equal(rescoped.tokens_dropped, undefined);
    assert.equal(
      (await auth.ok("get_auth_status", { platform: "mock" })).status,
      "active",
    );
    const otherSecret = await auth.ok("add_platform", {
      platform: "mock",
      config: { ...legit, client_secret: "another-secret-0123456789" },
    });
    assert.equal(otherSecret.tokens_dropped, true);
    assert.match(String(otherSecret.note), /client_secret/);
    assert.equal(
      (await auth.ok("get_auth_status", { platform: "mock" })).status,
      "not_authenticated",
    );
  } finally {
    await auth.close();
    await evil.close();
    await callback.close();
    await mock.close();
  }
});
