// A tool's `output` schema: listed as its outputSchema and checked by the kit
// before the answer leaves, as the MCP SDK's own McpServer does. The same
// tools run on an SDK McpServer, whose answers ours must equal.

import assert from "node:assert/strict";
import { z } from "zod";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.d.ts"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { HostedServer } from "../../tools/kit/host.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import { directLink } from "../../tools/kit/tool_call.ts";
import {
  defineServer,
  errorResult,
  json,
  toolDefiner,
  type ToolResult,
} from "../../tools/kit/mod.ts";
import {
  AjvJsonSchemaValidator,
  Client,
  InMemoryTransport,
} from "../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { builtinCatalog } from "../../tools/registry.ts";
import { capturedLog } from "../helpers.ts";

const Shape = z.object({
  count: z.number().int(),
  items: z.array(z.object({ name: z.string() })),
});

/** Each tool: what its handler answers, under the same output schema. */
const answers: Record<string, () => ToolResult> = {
  // Conforms; the extra key passes (zod's parse and the listed schema agree).
  good: () => json({ count: 1, items: [{ name: "a" }], extra: true }),
  wrong: () => json({ count: "one", items: [{ name: 2 }] }),
  bare: () => ({ content: [{ type: "text", text: "no structure" }] }),
  // Error results are not checked.
  failing: () => errorResult("it broke"),
};

const tool = toolDefiner<Record<string, never>>();

async function startKit() {
  const captured = capturedLog("error");
  const spec = defineServer<Record<string, never>>({
    id: "shaped",
    namespace: "svc-shaped",
    title: "Shaped",
    version: "1.0.0",
    tools: Object.entries(answers).map(([name, answer]) =>
      tool({
        name,
        description: `Answers ${name}`,
        input: z.object({}),
        output: Shape,
        handle: () => Promise.resolve(answer()),
      })
    ),
    start: () => Promise.resolve({ context: {} }),
  });
  const host = await HostedServer.start(spec, {
    store: new MemoryStore(),
    log: captured.log,
    config: {},
    dataDir: "/nonexistent/agentd-output-schema-test",
  });
  const client = new Client({ name: "output-test", version: "1.0.0" });
  await client.connect(await connectInProcess(host));
  return {
    host,
    client,
    logs: captured.logs,
    async [Symbol.asyncDispose]() {
      await client.close();
      await host.stop(0);
    },
  };
}

async function startSdk() {
  const server = new McpServer({ name: "sdk-shaped", version: "1.0.0" });
  for (const [name, answer] of Object.entries(answers)) {
    server.registerTool(name, {
      description: `Answers ${name}`,
      inputSchema: {},
      outputSchema: Shape.shape,
    }, () => answer());
  }
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "output-test", version: "1.0.0" });
  await client.connect(clientSide);
  return {
    client,
    async [Symbol.asyncDispose]() {
      await client.close();
      await server.close();
    },
  };
}

Deno.test("a result that breaks its output schema answers the SDK's error, word for word, and is logged", async () => {
  await using kit = await startKit();
  await using sdk = await startSdk();
  for (const name of ["wrong", "bare"]) {
    const ours = await kit.client.callTool({ name, arguments: {} });
    const theirs = await sdk.client.callTool({ name, arguments: {} });
    assert.equal(ours.isError, true, name);
    assert.deepEqual(ours, theirs, name);
  }
  const wrong = await kit.client.callTool({ name: "wrong", arguments: {} });
  assert.deepEqual(wrong.content, [{
    type: "text",
    text: "MCP error -32602: Output validation error: Invalid structured " +
      "content for tool wrong: Invalid input: expected number, received " +
      "string at count\nInvalid input: expected string, received number " +
      "at items[0].name",
  }]);
  const logged = kit.logs.filter((line) => line.event === "tool_output_invalid")
    .map((line) => line.tool);
  assert.deepEqual(logged, ["wrong", "bare", "wrong"]);
});

Deno.test("a conforming result and an error result pass as the SDK lets them", async () => {
  await using kit = await startKit();
  await using sdk = await startSdk();
  for (const name of ["good", "failing"]) {
    const ours = await kit.client.callTool({ name, arguments: {} });
    const theirs = await sdk.client.callTool({ name, arguments: {} });
    assert.deepEqual(ours, theirs, name);
    assert.deepEqual(ours, answers[name]?.(), name);
  }
  assert.deepEqual(
    kit.logs.filter((line) => line.event === "tool_output_invalid"),
    [],
  );
});

Deno.test("tools/list carries the output schema; the SDK client, having listed, accepts the real result", async () => {
  await using kit = await startKit();
  const { tools } = await kit.client.listTools();
  const good = tools.find((listed) => listed.name === "good");
  assert.deepEqual(good?.outputSchema, {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      count: {
        type: "integer",
        minimum: Number.MIN_SAFE_INTEGER,
        maximum: Number.MAX_SAFE_INTEGER,
      },
      items: {
        type: "array",
        items: {
          type: "object",
          properties: { name: { type: "string" } },
          required: ["name"],
        },
      },
    },
    required: ["count", "items"],
  });
  // The client now checks structuredContent against the listed schema itself.
  const result = await kit.client.callTool({ name: "good", arguments: {} });
  assert.deepEqual(result.structuredContent, {
    count: 1,
    items: [{ name: "a" }],
    extra: true,
  });
  // The listed schema is what the client judges by: it refuses a wrong shape.
  const check = new AjvJsonSchemaValidator().getValidator(
    good?.outputSchema ?? {},
  );
  assert.equal(check({ count: 1, items: [] }).valid, true);
  assert.equal(check({ count: "one", items: [] }).valid, false);
});

Deno.test("an in-process link (agents, the gateway) gets the same check", async () => {
  await using kit = await startKit();
  const link = directLink(kit.host, {});
  const wrong = await link.callTool("wrong", {}, {});
  assert.equal(wrong.isError, true);
  assert.match(
    String(wrong.content[0]?.type === "text" ? wrong.content[0].text : ""),
    /^MCP error -32602: Output validation error: Invalid structured content for tool wrong: /,
  );
  const good = await link.callTool("good", {}, {});
  assert.equal(good.isError, undefined);
});

Deno.test("every built-in tool declares its output schema, but the one that relays any result", async () => {
  const without: string[] = [];
  for (const spec of await builtinCatalog.load()) {
    for (const def of spec.tools) {
      if (def.output === undefined) without.push(`${spec.id}.${def.name}`);
    }
  }
  // route_tool_call answers whatever the upstream answered (maybe no
  // structuredContent at all): a schema would only be a guess.
  assert.deepEqual(without, ["gateway.route_tool_call"]);
});
