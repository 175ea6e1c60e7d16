// Each server's identity as the seed gives it (name, type "tool server",
// namespace `svc-<kind>`): in /health per server and in the MCP serverInfo
// an SDK client reads after initialize, over HTTP and over stdio.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { fixtureStdio, spawnServe, tempDir } from "../helpers.ts";

// The seed's table (part 1) for the servers built so far.
const SEED_NAMESPACES: Record<string, string> = {
  "browser-automation": "svc-browser-automation",
  gateway: "svc-mcp-gateway",
  memory: "svc-memory",
};

Deno.test("identity: /health and serverInfo name each server, its type and namespace", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path);
  try {
    const health = await (await fetch(`${daemon.url}/health`)).json();
    for (const [id, namespace] of Object.entries(SEED_NAMESPACES)) {
      const server = health.servers[id];
      assert.equal(server.name, id);
      assert.equal(server.type, "tool server");
      assert.equal(server.namespace, namespace);

      const client = new Client({ name: "identity", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp/${id}`)),
      );
      try {
        const info = client.getServerVersion();
        assert.equal(info?.name, `agentd-${id}`);
        assert.equal(
          info?.description,
          `name ${id}; type tool server; namespace ${namespace}`,
        );
        assert.ok(info?.title, `${id} has a title`);
      } finally {
        await client.close();
      }
    }
  } finally {
    await daemon.stop();
  }
});

Deno.test("identity: agentd mcp memory on stdio names itself in serverInfo", async () => {
  await using dir = await tempDir();
  const transport = fixtureStdio(
    ["mcp", "memory", "--data-dir", dir.path],
    { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "" },
  );
  const client = new Client({ name: "identity", version: "1.0.0" });
  await client.connect(transport);
  try {
    assert.equal(
      client.getServerVersion()?.description,
      "name memory; type tool server; namespace svc-memory",
    );
  } finally {
    await client.close();
  }
});
