// `serve` loads the built-in servers on first use (issue 37, idle memory):
// through a real daemon, /health says which are not loaded yet (not
// failed; desktop-control and platform-auth start with the daemon, since
// their start finds a dead display or a wrong key), the gateway
// lists their tools from the generated listings without loading them, and
// the first call through the gateway, or the first session at
// /mcp/<server>, loads and starts that server alone.

import assert from "node:assert/strict";
import { z } from "zod";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import {
  api,
  type Daemon,
  loggedAll,
  spawnServe,
  tempDir,
} from "../../helpers.ts";
import { callJson, gatewayClient } from "./upstreams.ts";

const Health = z.object({
  status: z.string(),
  servers: z.record(
    z.string(),
    z.object({ phase: z.string(), error: z.string().optional() }),
  ),
});

async function servers(daemon: Daemon): Promise<z.infer<typeof Health>> {
  const reply = await api(daemon, "GET", "/health");
  assert.equal(reply.status, 200, reply.text);
  return Health.parse(reply.json);
}

/** The servers a daemon loaded, from its `load` log lines, once `count` are read. */
async function loaded(daemon: Daemon, count = 0): Promise<string[]> {
  const lines = await loggedAll(
    daemon.logs,
    (line) => line.event === "load",
    count,
  );
  return lines.map((line) => String(line.server)).sort();
}

Deno.test("serve: built-in servers load on first use; /health, the gateway's list and calls stay truthful", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path, { env: { DISPLAY: "" } });
  try {
    const before = await servers(daemon);
    for (
      const id of [
        "browser-automation",
        "extension-bridge",
        "in-page",
        "memory",
        // An empty credential store: nothing to refresh or unseal yet.
        "platform-auth",
      ]
    ) {
      assert.equal(before.servers[id]?.phase, "not_loaded", id);
      assert.equal(before.servers[id]?.error, undefined, id);
    }
    assert.equal(before.servers.gateway?.phase, "running");
    // No display: its preflight said so, without loading it.
    assert.equal(before.servers["desktop-control"]?.phase, "error");
    assert.match(
      before.servers["desktop-control"]?.error ?? "",
      /DISPLAY is not set/,
    );
    assert.equal(before.status, "degraded", "desktop-control cannot start");

    await using client = await gatewayClient(daemon.url);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes("memory__store_memory"), names.join(" "));
    assert.ok(names.includes("platform-auth__list_platforms"));
    // The gateway knows desktop-control is down.
    assert.ok(!names.some((name) => name.startsWith("desktop-control__")));
    assert.deepEqual(await loaded(daemon), [], "listing loaded no server");
    assert.equal((await servers(daemon)).servers.memory?.phase, "not_loaded");

    // The first call loads memory, and memory alone.
    const stored = await callJson(client, "memory__store_memory", {
      namespace: "notes",
      key: "sky",
      value: "blue",
    });
    assert.ok(stored);
    const got = await callJson(client, "memory__retrieve_memory", {
      namespace: "notes",
      key: "sky",
    });
    assert.match(JSON.stringify(got), /blue/);
    assert.deepEqual(await loaded(daemon, 1), ["memory"]);
    const after = await servers(daemon);
    assert.equal(after.servers.memory?.phase, "running");
    assert.equal(after.servers["in-page"]?.phase, "not_loaded");
    // Loaded, its list is what the generated listings said.
    const again = (await client.listTools()).tools.map((tool) => tool.name);
    assert.deepEqual(again, names);

    // A session at /mcp/<server> loads that server.
    const direct = new Client({ name: "lazy-test", version: "1.0.0" });
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp/in-page`)),
    );
    assert.ok((await direct.listTools()).tools.length > 0);
    await direct.close();
    assert.equal((await servers(daemon)).servers["in-page"]?.phase, "running");
    assert.deepEqual(await loaded(daemon, 2), ["in-page", "memory"]);
  } finally {
    await daemon.stop();
  }
});
