// Without a usable X display the server is in the Error phase with a message
// saying how to fix it, and the rest of the daemon keeps answering.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { desktopControlServer } from "../../../tools/desktop-control/mod.ts";
import { HostedServer } from "../../../tools/kit/host.ts";
import { capturedLog, runCli, spawnServe, tempDir } from "../../helpers.ts";

/** A display number no X server listens on. */
function deadDisplay(): string {
  for (let n = 4242;; n++) {
    try {
      Deno.statSync(`/tmp/.X11-unix/X${n}`);
    } catch {
      return `:${n}`;
    }
  }
}

async function startWith(env: Record<string, string>): Promise<HostedServer> {
  const { log } = capturedLog("info");
  return await HostedServer.start(desktopControlServer, {
    store: new MemoryStore(),
    log,
    config: {},
    dataDir: "/nonexistent",
    env,
  });
}

Deno.test("desktop: no DISPLAY, or one nobody serves, puts the server in error saying how to fix it", async () => {
  const unset = await startWith({ PATH: "/usr/bin:/bin" });
  assert.equal(unset.phase.phase, "error");
  assert.match(unset.phase.state.error ?? "", /DISPLAY is not set.*Xvfb :99/);
  const dead = deadDisplay();
  const refused = await startWith({ DISPLAY: dead });
  assert.equal(refused.phase.phase, "error");
  assert.match(
    refused.phase.state.error ?? "",
    new RegExp(`Cannot open X display "${dead}": no X server answers there`),
  );
  assert.throws(() => refused.context(), /not running \(phase error/);
});

Deno.test("desktop: a daemon whose display is dead reports it in /health; other servers keep answering", async () => {
  await using dir = await tempDir();
  const dead = deadDisplay();
  const daemon = await spawnServe(dir.path, { env: { DISPLAY: dead } });
  try {
    const health = await (await fetch(`${daemon.url}/health`)).json();
    assert.equal(health.status, "degraded");
    const desktop = health.servers["desktop-control"];
    assert.equal(desktop.phase, "error");
    assert.match(desktop.error, /Cannot open X display/);
    // Memory waits for its first use; the display holds nothing else back.
    assert.equal(health.servers.memory.phase, "not_loaded");

    const memory = new Client({ name: "no-display", version: "1.0.0" });
    await memory.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp/memory`)),
    );
    const stored = await memory.callTool({
      name: "store_memory",
      arguments: { namespace: "n", key: "k", value: "still here" },
    });
    assert.notEqual(stored.isError, true);
    const back = await memory.callTool({
      name: "retrieve_memory",
      arguments: { namespace: "n", key: "k" },
    });
    assert.match(JSON.stringify(back.content), /still here/);
    await memory.close();

    // Its endpoint answers with the reason instead of a session.
    const client = new Client({ name: "no-display", version: "1.0.0" });
    await assert.rejects(
      client.connect(
        new StreamableHTTPClientTransport(
          new URL(`${daemon.url}/mcp/desktop-control`),
        ),
      ),
      /desktop-control.*phase error.*Cannot open X display/,
    );
  } finally {
    await daemon.stop();
  }
  // Alone on stdio it says why and serves in error until its client leaves
  // (tests/cli/mcp_start_failed_test.ts drives it with an MCP client).
  const alone = await runCli(["mcp", "desktop-control"], { DISPLAY: dead });
  assert.equal(alone.code, 0);
  assert.match(alone.stderr, /"event":"start_failed".*Cannot open X display/);
});
