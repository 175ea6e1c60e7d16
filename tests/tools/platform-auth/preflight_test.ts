// `serve` loads platform-auth on first use unless its preflight finds work
// (stored platforms, --init-store) or a key that does not open the store:
// then /health says so from the first request, without loading the server.
// A browser back at /oauth/callback loads it and gets its answer.

import assert from "node:assert/strict";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { createLogger } from "../../../platform/log.ts";
import { preflight } from "../../../tools/platform-auth/preflight.ts";
import { logged, spawnServe, tempDir } from "../../helpers.ts";
import { newKey } from "./harness.ts";

const health = async (url: string) =>
  (await (await fetch(`${url}/health`)).json()).servers["platform-auth"];

Deno.test("platform-auth preflight: an empty store waits, /oauth/callback loads it, another key is an error at once", async () => {
  await using dir = await tempDir();
  const key = newKey();
  const first = await spawnServe(dir.path, {
    env: { AGENTD_SECRET_KEY: key, DISPLAY: "" },
  });
  try {
    assert.equal((await health(first.url)).phase, "not_loaded");
    // A browser back from a provider: the server loads and judges the state.
    const page = await fetch(
      `${first.url}/oauth/callback?code=c&state=no-such-state`,
    );
    assert.equal(page.status, 400);
    assert.match(await page.text(), /Authorization failed/);
    assert.equal((await health(first.url)).phase, "running");
    await logged(
      first.logs,
      (line) => line.event === "load" && line.server === "platform-auth",
    );
  } finally {
    await first.stop();
  }

  // The store it created is sealed under `key`: another key is an error before any call.
  const other = await spawnServe(dir.path, {
    env: { AGENTD_SECRET_KEY: newKey(), DISPLAY: "" },
  });
  try {
    const auth = await health(other.url);
    assert.equal(auth.phase, "error");
    assert.match(
      auth.error,
      /Cannot start platform-auth: .*cannot be unsealed/,
    );
    assert.equal(
      (await (await fetch(`${other.url}/health`)).json()).status,
      "degraded",
    );
    assert.ok(
      !other.logs.some((line) =>
        line.event === "load" && line.server === "platform-auth"
      ),
      "judged without loading the server",
    );
  } finally {
    await other.stop();
  }

  // The right key again: nothing to say, it waits.
  const again = await spawnServe(dir.path, {
    env: { AGENTD_SECRET_KEY: key, DISPLAY: "" },
  });
  try {
    assert.equal((await health(again.url)).phase, "not_loaded");
  } finally {
    await again.stop();
  }
});

Deno.test("platform-auth preflight: stored platforms and --init-store start it with the daemon", async () => {
  await using dir = await tempDir();
  const options = (
    store: MemoryStore,
    config: Record<string, unknown> = {},
  ) => ({
    store,
    log: createLogger({ sink: () => {} }),
    config,
    dataDir: dir.path,
    env: { AGENTD_SECRET_KEY: newKey() },
  });
  const store = new MemoryStore();
  assert.equal(await preflight(options(store)), undefined, "no store yet");
  assert.deepEqual(
    await preflight(options(store, { init_store: true })),
    { start: "init_store creates the store now" },
  );
  await store.set(["meta"], { version: 1 });
  await store.set(["platforms", "github"], { name: "github" });
  assert.deepEqual(await preflight(options(store)), {
    start: "platforms are stored",
  });
});
