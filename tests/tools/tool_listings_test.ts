// tools/list answers from listings generated ahead (tools/<server>/tool_listings.ts).
// These tests keep them honest: a tool changed without regenerating fails here,
// and a host answers tools/list with the generated entries, not a derivation.

import assert from "node:assert/strict";
import { z } from "zod";
import {
  factsOf,
  listingsFile,
  listingsOf,
  protocolVersionsOf,
  REGENERATE,
  serverInfoOf,
} from "../../tools/tool_listings.ts";
import { builtinCatalog } from "../../tools/registry.ts";
import { HostedServer } from "../../tools/kit/host.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import { defineServer, text, toolDefiner } from "../../tools/kit/mod.ts";
import { Client } from "../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { capturedLog } from "../helpers.ts";
import { META_TOOLS } from "../../tools/gateway/on_demand.ts";

const ListingsModule = z.object({
  TOOL_LISTINGS: z.array(z.unknown()),
  SERVER_FACTS: z.unknown(),
  SERVER_INFO: z.unknown(),
  PROTOCOL_VERSIONS: z.unknown(),
});

for (const id of builtinCatalog.ids) {
  Deno.test(`${id}: tool_listings.ts is what its tools give today`, async () => {
    const [spec] = await builtinCatalog.load([id]);
    assert.ok(spec, `${id} loads`);
    const file = ListingsModule.parse(await import(listingsFile(id).href));
    assert.deepEqual(
      file.TOOL_LISTINGS,
      listingsOf(spec),
      `tools/${id}/tool_listings.ts is stale; regenerate: ${REGENERATE}`,
    );
    assert.deepEqual(spec.listings, file.TOOL_LISTINGS);
    // What `serve` shows of the server before loading it.
    assert.deepEqual(
      file.SERVER_FACTS,
      factsOf(spec),
      `tools/${id}/tool_listings.ts is stale; regenerate: ${REGENERATE}`,
    );
    // What the stdio front (cli/stdio_front.ts) answers initialize with.
    assert.deepEqual(
      [file.SERVER_INFO, file.PROTOCOL_VERSIONS],
      [serverInfoOf(spec), protocolVersionsOf()],
      `tools/${id}/tool_listings.ts is stale; regenerate: ${REGENERATE}`,
    );
  });
}

Deno.test("every built-in tool, the gateway's meta-tools included, has a short title", async () => {
  const problems: string[] = [];
  for (const spec of await builtinCatalog.load()) {
    const defs = spec.id === "gateway"
      ? [...spec.tools, ...META_TOOLS]
      : spec.tools;
    for (const def of defs) {
      const title = def.title?.trim() ?? "";
      if (title === "" || title.length > 40) {
        problems.push(`${spec.id}/${def.name}: ${JSON.stringify(def.title)}`);
      }
    }
  }
  assert.deepEqual(problems, [], "tools without a title of 1-40 characters");
});

const tool = toolDefiner<Record<string, never>>();

Deno.test("tools/list answers from the generated listing; a tool without one is derived; calls validate strictly", async () => {
  const echo = tool({
    name: "echo",
    description: "Says it back",
    input: z.object({ words: z.string() }),
    handle: (_ctx, input) => Promise.resolve(text(input.words)),
  });
  const plain = tool({
    name: "plain",
    description: "Derived",
    input: z.object({}),
    handle: () => Promise.resolve(text("ok")),
  });
  // A description only the generated entry carries.
  const generated = {
    name: "echo",
    description: "from the generated file",
    inputSchema: { type: "object" as const },
  };
  const spec = defineServer<Record<string, never>>({
    id: "listed",
    namespace: "svc-listed",
    title: "Listed",
    version: "1.0.0",
    tools: [echo, plain],
    listings: [generated],
    start: () => Promise.resolve({ context: {} }),
  });
  const host = await HostedServer.start(spec, {
    store: new MemoryStore(),
    log: capturedLog("error").log,
    config: {},
    dataDir: "/nonexistent/agentd-listings-test",
  });
  const client = new Client({ name: "listings-test", version: "1.0.0" });
  await client.connect(await connectInProcess(host));
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools[0], generated);
    assert.deepEqual(tools[1], {
      name: "plain",
      description: "Derived",
      inputSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: {},
        additionalProperties: false,
      },
      // Every listing names its server and tool (tools/kit/tool_names.ts).
      _meta: { "io.agentd/origin": { server: "listed", tool: "plain" } },
    });
    const said = await client.callTool({
      name: "echo",
      arguments: { words: "hi" },
    });
    assert.deepEqual(said.content, [{ type: "text", text: "hi" }]);
    // The zod input, not the generated entry, judges arguments (strict: no extra keys).
    const extra = await client.callTool({
      name: "echo",
      arguments: { words: "hi", more: 1 },
    });
    assert.equal(extra.isError, true);
    const wrong = await client.callTool({
      name: "echo",
      arguments: { words: 1 },
    });
    assert.equal(wrong.isError, true);
  } finally {
    await client.close();
    await host.stop(0);
  }
});
