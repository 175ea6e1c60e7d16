// A server's declared callback path (ServerSpec.callbacks, platform-auth's
// /oauth/callback) in the daemon's app: reached without the daemon token (a
// browser carries none) but behind the Host guard, handed to the running
// server, 404 naming the server when it does not run; a path no server
// declares is not opened.

import assert from "node:assert/strict";
import { createLogger } from "../../../platform/log.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { createApp } from "../../../routes/mod.ts";
import { HostedServer } from "../../../tools/kit/host.ts";
import { defineServer } from "../../../tools/kit/mod.ts";

const TOKEN = "daemon-token-0123456789";

function callbackSpec(seen: URLSearchParams[]) {
  return defineServer<null>({
    id: "callbacks",
    namespace: "svc-callbacks",
    title: "Callbacks",
    version: "1.0.0",
    tools: [],
    callbacks: {
      "/oauth/callback": {
        answer(_context, params) {
          seen.push(params);
          const ok = params.get("state") === "good";
          return Promise.resolve({
            ok,
            title: ok ? "Connected" : "Authorization failed",
            message: ok ? "Connected <now>" : "Unknown state",
          });
        },
      },
    },
    start() {
      return Promise.resolve({ context: null });
    },
  });
}

Deno.test("/oauth/callback: no bearer needed, Host guarded, handled by the server that declares it", async () => {
  const log = createLogger({ sink: () => {} });
  const store = new MemoryStore();
  const seen: URLSearchParams[] = [];
  const host = await HostedServer.start(callbackSpec(seen), {
    store,
    log,
    config: {},
    dataDir: "/nonexistent/agentd-oauth-route",
  });
  const app = (hosts: HostedServer[]) =>
    createApp({
      hosts,
      endpoints: new Map(),
      layout: "daemon",
      bindHost: "127.0.0.1",
      allowedHosts: [],
      allowedOrigins: [],
      maxBodyBytes: 1024 * 1024,
      token: TOKEN,
      version: "0.0.0",
      startedAt: Date.now(),
      log,
    });
  const get = (
    hosts: HostedServer[],
    query: string,
    hostHeader = "127.0.0.1:8765",
  ) =>
    app(hosts).request(`http://${hostHeader}/oauth/callback?${query}`, {
      headers: { host: hostHeader },
    });
  try {
    const good = await get([host], "code=c1&state=good");
    assert.equal(good.status, 200);
    assert.equal(good.headers.get("cache-control"), "no-store");
    const page = await good.text();
    assert.match(page, /<h1>Connected<\/h1>/);
    assert.match(page, /Connected &#60;now&#62;/, "the message is escaped");
    assert.equal(seen[0].get("code"), "c1");

    const bad = await get([host], "code=c2&state=bad");
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /Authorization failed/);

    // The rest of the daemon still wants the token.
    const health = await app([host]).request("http://127.0.0.1:8765/health", {
      headers: { host: "127.0.0.1:8765" },
    });
    assert.equal(health.status, 401);
    await health.body?.cancel();

    const foreign = await get([host], "code=c3&state=good", "evil.example");
    assert.equal(foreign.status, 403);
    await foreign.body?.cancel();
    assert.equal(seen.length, 2, "a refused Host never reaches the server");

    const undeclared = await get([], "code=c4&state=good");
    assert.equal(undeclared.status, 401, "no server declares it: token needed");
    await undeclared.body?.cancel();

    await host.stop(1_000);
    const stopped = await get([host], "code=c5&state=good");
    assert.equal(stopped.status, 404);
    assert.match(
      (await stopped.json()).error.message,
      /No server that answers \/oauth\/callback is running \(callbacks: shutdown\)/,
    );
    assert.equal(seen.length, 2);
  } finally {
    await host.stop(1_000);
    await store.close();
  }
});
