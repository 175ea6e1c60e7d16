// Two platform-auth servers (two daemons) on one real PostgreSQL store: an
// expiring token wanted by both at once reaches the provider as one refresh;
// the other daemon waits for the lease holder and gets the same token; the
// rotated refresh token is saved once and is the one spent next time.

import assert from "node:assert/strict";
import { waitFor } from "../../helpers.ts";
import { ManualClock } from "../../../tools/platform-auth/clock.ts";
import { PgStore } from "../../../platform/store/pg.ts";
import { pgTestIgnore, startPgServer } from "../../pg_server.ts";
import { type AuthHarness, callbackListener, startAuth } from "./harness.ts";
import { startMockServer } from "./providers.ts";

/** The mock's token endpoint behind a gate that holds refresh requests until opened. */
function gatedTokenEndpoint(target: string) {
  let open: () => void = () => {};
  const gate = new Promise<void>((resolve) => open = resolve);
  const spent: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const body = await request.text();
      const form = new URLSearchParams(body);
      if (form.get("grant_type") === "refresh_token") {
        spent.push(form.get("refresh_token") ?? "");
        await gate;
      }
      const headers = new Headers(request.headers);
      headers.delete("host");
      headers.delete("content-length");
      const answer = await fetch(target, { method: "POST", headers, body });
      return new Response(await answer.arrayBuffer(), {
        status: answer.status,
        headers: { "content-type": "application/json" },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/token`,
    /** Refresh tokens sent to the provider, in order. */
    spent,
    open: () => open(),
    close: () => server.shutdown(),
  };
}

async function connect(auth: AuthHarness, platform: string): Promise<void> {
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

const refreshedOk = (lines: string[]) =>
  lines.filter((line) =>
    line.includes('"operation":"refresh"') && line.includes('"outcome":"ok"')
  ).length;

Deno.test({
  name:
    "platform-auth on one PostgreSQL store: one refresh across two daemons, same token, rotated token saved once",
  ignore: pgTestIgnore(),
  async fn() {
    const pg = await startPgServer();
    const mock = await startMockServer();
    const endpoint = gatedTokenEndpoint(`${mock.issuer}/token`);
    const callbacks = [callbackListener(), callbackListener()];
    const stores: PgStore[] = [];
    const harnesses: AuthHarness[] = [];
    let issued = 0;
    mock.server.service.on("beforeResponse", (response, request) => {
      if (request.body?.grant_type !== "refresh_token") return;
      issued++;
      response.body = {
        ...response.body,
        access_token: `fresh-access-${issued}`,
        refresh_token: `rotated-refresh-${issued}`,
      };
    });
    try {
      const url = await pg.createDatabase("platform_auth");
      for (let i = 0; i < 2; i++) {
        stores.push(await PgStore.connect({ url, password: pg.password }));
      }
      const clocks = [new ManualClock(), new ManualClock()];
      const a = await startAuth({
        clock: clocks[0],
        callback: callbacks[0],
        store: stores[0],
      });
      harnesses.push(a);
      const b = await startAuth({
        clock: clocks[1],
        callback: callbacks[1],
        store: stores[1],
        key: a.key,
      });
      harnesses.push(b);
      await a.ok("add_platform", {
        platform: "mock",
        config: {
          issuer: mock.issuer,
          authorization_endpoint: `${mock.issuer}/authorize`,
          token_endpoint: endpoint.url,
          client_id: "mockclient",
          client_secret: "mock-secret-0123456789",
          scopes: ["read"],
        },
      });
      await connect(a, "mock");
      const first = await b.ok("get_token", { platform: "mock" });

      // Both daemons' clocks pass the refresh margin; both want a new token at once.
      for (const clock of clocks) clock.advance(3_600_000 - 300_000 + 1_000);
      const wanted = [a, b, a, b, a, b].map((auth) =>
        auth.ok("get_token", { platform: "mock" })
      );
      // Settled calls only: a failed wait below must report itself, not a closed client.
      for (const call of wanted) call.catch(() => {});
      // The first refresh is held at the provider until the other daemon waits on its lease.
      await waitFor(() => endpoint.spent.length, (count) => count >= 1);
      await waitFor(
        () =>
          [...a.lines, ...b.lines].some((l) =>
            l.includes("refresh_lease_wait")
          ),
        Boolean,
      );
      endpoint.open();
      const tokens = await Promise.all(wanted);
      assert.equal(
        endpoint.spent.length,
        1,
        "one refresh reached the provider",
      );
      assert.equal(issued, 1);
      assert.deepEqual(
        new Set(tokens.map((token) => token.access_token)),
        new Set(["fresh-access-1"]),
        "both daemons hand out the same fresh token",
      );
      assert.notEqual(first.access_token, "fresh-access-1");
      assert.equal(
        refreshedOk(a.lines) + refreshedOk(b.lines),
        1,
        "the rotated tokens were saved once",
      );

      // Next expiry, asked on B only: the refresh spends the rotated token A or B saved.
      for (const clock of clocks) clock.advance(3_600_000);
      const next = await b.ok("get_token", { platform: "mock" });
      assert.equal(next.access_token, "fresh-access-2");
      assert.deepEqual(endpoint.spent.slice(1), ["rotated-refresh-1"]);
      assert.equal(issued, 2);
    } finally {
      endpoint.open();
      for (const auth of harnesses.reverse()) await auth.close();
      for (const store of stores) await store.close();
      for (const callback of callbacks) await callback.close();
      await endpoint.close();
      await mock.close();
      await pg.destroy();
    }
  },
});
