// Tools on demand for ordinary MCP clients: `/mcp?tools=on_demand` (or the
// `X-Agentd-Tools` header) on the request that opens a session chooses the
// mode for that session only; the plain endpoint keeps the full list.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { spawnServe, tempDir } from "../../helpers.ts";

async function client(
  url: string,
  headers: Record<string, string> = {},
): Promise<Client & AsyncDisposable> {
  const made = new Client({ name: "endpoint-test", version: "1.0.0" });
  await made.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers },
    }),
  );
  return Object.assign(made, { [Symbol.asyncDispose]: () => made.close() });
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw", version: "1.0.0" },
  },
};
const ACCEPT = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** The tool names of an SSE or JSON reply to tools/list. */
async function toolNames(response: Response): Promise<string[]> {
  const body = await response.text();
  const json = body.startsWith("{")
    ? body
    : body.split("\n").find((line) => line.startsWith("data: "))?.slice(6);
  assert.ok(json, body);
  const tools: { name: string }[] = JSON.parse(json).result.tools;
  return tools.map((tool) => tool.name);
}

Deno.test("on demand per client: ?tools=on_demand and X-Agentd-Tools choose the mode of that session only", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path);
  try {
    const meta = ["search_tools", "describe_tool", "call_tool"];
    await using plain = await client(`${daemon.url}/mcp`);
    const every = (await plain.listTools()).tools.map((tool) => tool.name);
    assert.ok(every.length > 8, `${every.length} tools`);
    assert.ok(every.includes("memory__store_memory"));

    await using lean = await client(`${daemon.url}/mcp?tools=on_demand`);
    const few = (await lean.listTools()).tools.map((tool) => tool.name);
    assert.ok(few.length <= 8);
    assert.deepEqual(few, meta);
    const found = await lean.callTool({
      name: "search_tools",
      arguments: { query: "store a memory" },
    });
    assert.match(JSON.stringify(found.content), /memory__store_memory/);

    await using headed = await client(`${daemon.url}/mcp`, {
      "X-Agentd-Tools": "on_demand",
    });
    assert.deepEqual(
      (await headed.listTools()).tools.map((tool) => tool.name),
      meta,
    );

    // The mode sticks to the session: later requests carry only its id.
    const opened = await fetch(`${daemon.url}/mcp?tools=on_demand`, {
      method: "POST",
      headers: ACCEPT,
      body: JSON.stringify(INITIALIZE),
    });
    await opened.body?.cancel();
    const session = opened.headers.get("mcp-session-id");
    assert.ok(session);
    const sessionHeaders = {
      ...ACCEPT,
      "mcp-session-id": session,
      "mcp-protocol-version": "2025-06-18",
    };
    const initialized = await fetch(`${daemon.url}/mcp`, {
      method: "POST",
      headers: sessionHeaders,
      body: JSON.stringify({
        jsonrpc: "2.0",
        method: "notifications/initialized",
      }),
    });
    await initialized.body?.cancel();
    const listed = await fetch(`${daemon.url}/mcp?tools=all`, {
      method: "POST",
      headers: sessionHeaders,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    assert.deepEqual(await toolNames(listed), meta);
    const closed = await fetch(`${daemon.url}/mcp`, {
      method: "DELETE",
      headers: sessionHeaders,
    });
    await closed.body?.cancel();

    // Session-less requests honour it too.
    const stateless = await fetch(`${daemon.url}/mcp?tools=on_demand`, {
      method: "POST",
      headers: ACCEPT,
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }),
    });
    assert.deepEqual(await toolNames(stateless), meta);

    // A mode that does not exist is refused, naming the parameter.
    const bad = await fetch(`${daemon.url}/mcp?tools=some`, {
      method: "POST",
      headers: ACCEPT,
      body: JSON.stringify(INITIALIZE),
    });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /tools: "some".*on_demand/);
  } finally {
    await daemon.stop();
  }
});
