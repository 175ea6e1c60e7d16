// Every memory tool through real transports: the MCP SDK client over stdio
// (spawning the CLI's `mcp memory`) and over HTTP (`serve`, /mcp/memory).

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { StdioClientTransport } from "../../../platform/mcp_sdk_stdio_client.ts";
import { FIXTURE_CLI, ROOT, spawnServe, tempDir } from "../../helpers.ts";
import { exerciseAllTools } from "./scenario.ts";

Deno.test("memory over stdio: every tool with the SDK client", async () => {
  await using dir = await tempDir();
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", FIXTURE_CLI, "mcp", "memory", "--data-dir", dir.path],
    cwd: ROOT,
    env: { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "" },
    stderr: "pipe",
  });
  const client = new Client({ name: "memory-stdio", version: "1.0.0" });
  await client.connect(transport);
  try {
    await exerciseAllTools(client);
  } finally {
    await client.close();
  }
});

Deno.test("memory over HTTP: every tool at /mcp/memory of agentd serve", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path);
  const transport = new StreamableHTTPClientTransport(
    new URL(`${daemon.url}/mcp/memory`),
  );
  const client = new Client({ name: "memory-http", version: "1.0.0" });
  await client.connect(transport);
  try {
    await exerciseAllTools(client);
    const health = await (await fetch(`${daemon.url}/health`)).json();
    const memory = health.servers.memory;
    assert.equal(memory.phase, "running");
    assert.equal(memory.details.storage, "local");
    assert.equal(memory.details.embedder, "builtin:hash-v3:256");
    assert.ok(memory.details.ops_per_second > 0);
    assert.ok(memory.details.search_latency_ms.count >= 2);
    assert.equal(memory.details.entries_per_namespace.pages, 7);
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    assert.match(
      metrics,
      /agentd_memory_operations_total\{operation="store"\} \d+/,
    );
    assert.match(
      metrics,
      /agentd_memory_search_latency_ms\{quantile="0\.95"\} /,
    );
    assert.match(metrics, /agentd_memory_entries\{namespace="pages"\} 7/);
    assert.match(
      metrics,
      /agentd_memory_query_cache_total\{result="miss"\} \d+/,
    );
  } finally {
    await transport.terminateSession();
    await client.close();
    assert.equal((await daemon.stop()).code, 0);
  }
});
