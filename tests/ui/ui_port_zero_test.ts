// `agentd ui --port 0`: the daemon it starts takes a free port, and the
// window (here the browser fallback) goes to that port, read from the
// daemon's `listening` line, not to port 0.

import assert from "node:assert/strict";
import { tempDir, waitFor } from "../helpers.ts";
import { fakeOpener, finished, headlessEnv, spawnUi } from "./ui_support.ts";

Deno.test("ui: --port 0 starts a daemon on a free port and opens the dashboard there", async () => {
  await using dir = await tempDir();
  const opener = await fakeOpener(dir.path);
  const env = headlessEnv();
  const child = spawnUi(
    [
      "--browser",
      "--port",
      "0",
      "--data-dir",
      dir.path,
      "--servers",
      "gateway",
    ],
    { ...env, PATH: `${opener.bin}:${env.PATH ?? ""}` },
  );
  const done = finished(child);
  let stopped = false;
  try {
    const outcome = await Promise.race([
      waitFor(
        () => opener.opened(),
        (opened) => opened.length === 1,
        60_000,
      ),
      done.then((result) => result),
    ]);
    assert.ok(
      Array.isArray(outcome),
      `agentd ui ended before opening anything: ${JSON.stringify(outcome)}`,
    );
    const [url] = outcome;
    const match = /^http:\/\/127\.0\.0\.1:(\d+)\/dashboard\/login\?code=/
      .exec(url ?? "");
    assert.ok(match, `opened ${url}`);
    const port = Number(match[1]);
    assert.notEqual(port, 0);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();

    child.kill("SIGTERM");
    stopped = true;
    const result = await done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /--port 0: starting a daemon on a free port/);
    // The daemon's own log still reaches the person, with its real port.
    assert.match(result.stderr, new RegExp(`"event":"listening".*${port}`));
    await assert.rejects(fetch(`http://127.0.0.1:${port}/health`));
  } finally {
    if (!stopped) {
      try {
        child.kill("SIGTERM");
      } catch {
        // already exited
      }
      await done;
    }
  }
});
