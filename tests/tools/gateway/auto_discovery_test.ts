// Auto-discovery while running, with its defaults: two daemons sharing a
// coordination store add each other's own servers (never each other's
// aggregate), a server on a configured loopback port is added, a configured
// other host is not contacted, and what leaves is removed again.

import assert from "node:assert/strict";
import { join } from "node:path";
import { logged, spawnServe, tempDir, waitFor } from "../../helpers.ts";
import { autoNetworks } from "../../../tools/gateway/auto_discovery.ts";
import { DiscoveryConfig } from "../../../tools/gateway/config.ts";
import {
  call,
  callJson,
  gatewayClient,
  startEverythingHttp,
  textOf,
  writeConfig,
} from "./upstreams.ts";

interface Listed {
  name: string;
  source: string;
  url: string;
  state: string;
  tools: string[];
}

async function listed(url: string): Promise<Listed[]> {
  await using client = await gatewayClient(url);
  return (await callJson(client, "list_servers")).servers as Listed[];
}

Deno.test("gateway: auto-discovery is on by default for announced daemons and loopback ports, never for other hosts", async () => {
  await using dir = await tempDir();
  await using probed = await startEverythingHttp();
  // Stands for another host: any request to it would be a scan.
  let scanned = 0;
  const other = Deno.serve({ port: 0, onListen() {} }, async (request) => {
    scanned++;
    await request.body?.cancel();
    return new Response("not MCP", { status: 404 });
  });
  const discovery = {
    store: join(dir.path, "coordination.kv"),
    interval_ms: 1000,
    ports: [probed.port],
    hosts: [`127.0.0.1:${other.addr.port}`],
  };
  const first = await spawnServe(join(dir.path, "one"), {
    extra: ["--config", await writeConfig(dir.path, { discovery })],
  });
  const secondDir = join(dir.path, "two");
  await Deno.mkdir(secondDir);
  const second = await spawnServe(join(secondDir, "data"), {
    extra: ["--config", await writeConfig(secondDir, { discovery })],
  });
  try {
    const found = await waitFor(
      () => listed(first.url),
      (servers) =>
        servers.some((server) =>
          server.url === `${second.url}/mcp/memory` &&
          server.state === "healthy"
        ) &&
        servers.some((server) =>
          server.url === probed.url && server.state === "healthy"
        ),
      20_000,
    );
    const discovered = found.filter((server) => server.source === "discovered");
    const memory = discovered.find((server) =>
      server.url === `${second.url}/mcp/memory`
    );
    assert.match(memory?.name ?? "", /^agentd-[a-z0-9-]+-memory$/);
    assert.ok(memory?.tools.includes(`${memory.name}__store_memory`));
    // Never the other daemon's aggregate, nor ourselves.
    assert.ok(
      !discovered.some((server) =>
        server.url === `${second.url}/mcp` ||
        server.url.startsWith(`${first.url}/`)
      ),
      JSON.stringify(discovered),
    );
    // The loopback server is callable through its discovered name.
    const everything = discovered.find((server) => server.url === probed.url);
    assert.ok(everything);
    await using client = await gatewayClient(first.url);
    assert.equal(
      textOf(
        await call(client, `${everything.name}__echo`, { message: "found" }),
      ),
      "Echo: found",
    );
    // A discovered server is not unregistered by hand: it follows discovery.
    const refused = await call(client, "unregister_server", {
      name: everything.name,
    });
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /auto-discovery/);
    assert.equal(scanned, 0, "a configured other host was not probed");

    // The second daemon stops: its servers leave the first one.
    assert.equal((await second.stop()).code, 0);
    await waitFor(
      () => listed(first.url),
      (servers) =>
        !servers.some((server) => server.url.startsWith(`${second.url}/`)),
      20_000,
    );
    await logged(
      first.logs,
      (line) => line.event === "undiscovered" && line.upstream === memory?.name,
    );
    assert.equal(scanned, 0);
  } finally {
    await second.stop();
    assert.equal((await first.stop()).code, 0);
    await other.shutdown();
  }
});

Deno.test("auto_register: sources by default, true, false, a list; unknown names refused", () => {
  assert.deepEqual(autoNetworks(DiscoveryConfig.parse({})), [
    "store",
    "loopback",
  ]);
  assert.deepEqual(
    autoNetworks(
      DiscoveryConfig.parse({
        auto_register: true,
        networks: { lab: ["10.0.0.2:3001"] },
      }),
    ),
    ["store", "loopback", "hosts", "lab"],
  );
  assert.deepEqual(
    autoNetworks(DiscoveryConfig.parse({ auto_register: false })),
    [],
  );
  assert.deepEqual(
    autoNetworks(
      DiscoveryConfig.parse({
        auto_register: ["store", "lab"],
        networks: { lab: ["10.0.0.2:3001"] },
      }),
    ),
    ["store", "lab"],
  );
  const bad = DiscoveryConfig.safeParse({ auto_register: ["office"] });
  assert.equal(bad.success, false);
  assert.match(
    JSON.stringify(bad.error?.issues),
    /auto_register.*unknown source \\"office\\"/,
  );
});
