// The gateway's other faces: /admin of a live daemon in headless Chromium,
// `agentd mcp gateway --port --config` alone, and discovery between two
// daemons sharing a coordination store.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  browserTestIgnore,
  launchChromium,
  saveArtifact,
} from "../../browser.ts";
import { Client } from "../../../platform/mcp_sdk.ts";
import {
  fixtureStdio,
  runCli,
  spawnDaemon,
  spawnServe,
  tempDir,
  waitFor,
} from "../../helpers.ts";
import {
  adminView,
  call,
  callJson,
  EVERYTHING,
  gatewayClient,
  startEverythingHttp,
  stateOf,
  textOf,
  writeConfig,
} from "./upstreams.ts";

/** `agentd mcp gateway` alone: `flags`, then `config` and a data dir in `dir`. */
function gatewayAlone(dir: string, config: string, ...flags: string[]) {
  return [
    "mcp",
    "gateway",
    ...flags,
    "--config",
    config,
    "--data-dir",
    join(dir, "data"),
  ];
}

Deno.test({
  name:
    "gateway: /admin of a live daemon in Chromium shows every upstream with its state",
  ignore: browserTestIgnore,
  async fn() {
    await using dir = await tempDir();
    await using up = await startEverythingHttp();
    const down = await startEverythingHttp();
    const config = await writeConfig(dir.path, {
      health_interval_ms: 300,
      upstreams: { up: { url: up.url }, down: { url: down.url } },
    });
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: ["--config", config],
    });
    try {
      await down.kill();
      const view = await waitFor(
        () => adminView(daemon.url),
        (now) => stateOf(now, "down") === "unhealthy",
        5000,
      );
      await using browser = await launchChromium();
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      const response = await page.goto(`${daemon.url}/admin`, {
        waitUntil: "load",
      });
      assert.equal(response?.status(), 200);
      const rows = await page.$$eval(
        "#servers tr[data-server]",
        (found) =>
          found.map((row) => ({
            name: row.getAttribute("data-server"),
            state: row.getAttribute("data-state"),
            cell: row.querySelector("td.state")?.textContent ?? null,
          })),
      );
      assert.deepEqual(
        rows,
        view.servers.map((server) => ({
          name: server.name,
          state: server.state,
          cell: server.state,
        })),
      );
      assert.deepEqual(
        rows.map((row) => row.name).sort(),
        [
          "browser-automation",
          "conformance",
          "desktop-control",
          "down",
          "extension-bridge",
          "in-page",
          "memory",
          "platform-auth",
          "up",
        ],
      );
      assert.equal(rows.find((row) => row.name === "down")?.state, "unhealthy");
      assert.equal(rows.find((row) => row.name === "up")?.state, "healthy");
      const tools = await page.$$eval(
        "#tools tr[data-tool]",
        (found) => found.map((row) => row.getAttribute("data-tool")),
      );
      assert.ok(tools.includes("up__echo"), "catalog lists up__echo");
      assert.ok(!tools.some((name) => name?.startsWith("down__")));
      const path = await saveArtifact(
        "gateway-admin.png",
        await page.screenshot({ fullPage: true }),
      );
      assert.ok((await Deno.stat(path)).size > 10_000);
    } finally {
      assert.equal((await daemon.stop()).code, 0);
    }
  },
});

Deno.test("gateway alone: `agentd mcp gateway --port --config` serves /mcp, /health and /admin", async () => {
  await using dir = await tempDir();
  await using upstream = await startEverythingHttp();
  const config = await writeConfig(dir.path, {
    upstreams: { everything: { url: upstream.url } },
  });
  const daemon = await spawnDaemon(
    gatewayAlone(dir.path, config, "--port", "0"),
  );
  try {
    await using client = await gatewayClient(daemon.url);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes("everything__echo"));
    // Alone, there are no built-in peers.
    assert.ok(!names.some((name) => name.startsWith("memory__")));
    assert.equal(
      textOf(await call(client, "everything__echo", { message: "alone" })),
      "Echo: alone",
    );
    const health = await (await fetch(`${daemon.url}/health`)).json();
    assert.equal(health.servers.gateway.phase, "running");
    assert.deepEqual(health.servers.gateway.details.upstreams, {
      everything: "healthy",
    });
    assert.equal(stateOf(await adminView(daemon.url), "everything"), "healthy");
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    assert.match(
      metrics,
      /agentd_gateway_upstream_calls_total\{upstream="everything",group="everything"\} 1/,
    );
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});

Deno.test("gateway: bad gateway config stops the start with a message naming the field", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, {
    upstreams: { both: { url: "http://127.0.0.1:1/mcp", command: "node" } },
  });
  const result = await runCli(gatewayAlone(dir.path, config, "--port", "0"));
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /gateway\.upstreams\.both.*exactly one of url/s);
});

Deno.test("gateway: discover_servers finds a daemon announced in a shared store and a configured port, and registers nothing", async () => {
  await using dir = await tempDir();
  await using probed = await startEverythingHttp();
  const shared = join(dir.path, "coordination.kv");
  const discovery = {
    store: shared,
    interval_ms: 1000,
    ports: [probed.port],
    // Only the tool here: auto-discovery (on by default) would add them.
    auto_register: false,
  };
  const first = await spawnServe(join(dir.path, "one"), {
    extra: ["--config", await writeConfig(join(dir.path), { discovery })],
  });
  const secondDir = join(dir.path, "two");
  await Deno.mkdir(secondDir);
  const second = await spawnServe(join(secondDir, "data"), {
    extra: ["--config", await writeConfig(secondDir, { discovery })],
  });
  try {
    await using client = await gatewayClient(first.url);
    const found = await waitFor(
      () => callJson(client, "discover_servers"),
      (report) => JSON.stringify(report).includes(`${second.url}/mcp`),
      8000,
    );
    const servers = found.servers as {
      url: string;
      source: string;
      reachable: boolean;
      server_name?: string;
      registered_as: string | null;
    }[];
    const peer = servers.find((server) => server.source === "announcement");
    assert.equal(peer?.reachable, true);
    assert.equal(peer?.server_name, "agentd-gateway");
    assert.ok(
      !servers.some((server) => server.url === `${first.url}/mcp`),
      "a daemon does not discover itself",
    );
    const port = servers.find((server) => server.source === "loopback");
    assert.equal(port?.url, probed.url);
    assert.equal(port?.reachable, true);
    assert.ok(servers.every((server) => server.registered_as === null));
    const listed = JSON.stringify(await callJson(client, "list_servers"));
    assert.doesNotMatch(listed, /"registered"/, "nothing was registered");

    const unknown = await call(client, "discover_servers", {
      network: "nowhere",
    });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /loopback/);
  } finally {
    assert.equal((await second.stop()).code, 0);
    assert.equal((await first.stop()).code, 0);
  }
});

Deno.test("gateway alone on stdio: a desktop client reaches a stdio upstream through it", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, {
    upstreams: { everything: { command: "node", args: [EVERYTHING, "stdio"] } },
  });
  const client = new Client({ name: "desktop", version: "1.0.0" });
  const transport = fixtureStdio(gatewayAlone(dir.path, config));
  const logs: string[] = [];
  transport.stderr?.on("data", (chunk: Uint8Array) => {
    logs.push(new TextDecoder().decode(chunk));
  });
  await client.connect(transport);
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes("everything__echo"), names.join(", "));
    assert.equal(
      textOf(await call(client, "everything__echo", { message: "stdio" })),
      "Echo: stdio",
    );
  } finally {
    await client.close();
  }
  // Every stderr line is a JSON log line (the upstream's own stderr included).
  for (const line of logs.join("").split("\n").filter(Boolean)) {
    assert.doesNotThrow(() => JSON.parse(line), line);
  }
});
