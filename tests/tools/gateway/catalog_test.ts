// The aggregate catalog: per-tool overrides (description, hidden, defaults)
// and collisions between groups producing one gateway name; and the
// on-demand ranking putting the tool asked for first.

import assert from "node:assert/strict";
import { capturedLog } from "../../helpers.ts";
import { buildCatalog } from "../../../tools/gateway/catalog.ts";
import { ToolOverride } from "../../../tools/gateway/config.ts";
import { Upstream } from "../../../tools/gateway/upstream.ts";
import { TextRanker } from "../../../tools/gateway/text_rank.ts";
import { gatewayName, originOf } from "../../../tools/kit/tool_names.ts";

function healthy(name: string, tools: string[]): Upstream {
  const { log } = capturedLog("error");
  const upstream = new Upstream({
    name,
    group: name,
    source: "config",
    target: {
      kind: "http",
      url: "http://127.0.0.1:1/mcp",
      headers: {},
      passThroughAuth: false,
    },
    log,
    connectTimeoutMs: 1000,
    healthTimeoutMs: 1000,
    callTimeoutMs: 1000,
    callMaxMs: 60_000,
    onChange() {},
  });
  upstream.state = "healthy";
  upstream.tools = tools.map((tool) => ({
    name: tool,
    description: `Does ${tool}.`,
    inputSchema: {
      type: "object",
      properties: { key: { type: "string" }, namespace: { type: "string" } },
      required: ["key", "namespace"],
    },
  }));
  return upstream;
}

Deno.test("catalog: overrides change the description, hide a tool, and default an argument", () => {
  const catalog = buildCatalog([healthy("mem", ["store", "drop", "read"])], {
    overrides: {
      mem__drop: ToolOverride.parse({ hidden: true }),
      mem__read: ToolOverride.parse({
        description: "Read a note back.",
        defaults: { namespace: "notes" },
      }),
    },
  });
  assert.deepEqual([...catalog.keys()], ["mem__read", "mem__store"]);
  const read = catalog.get("mem__read");
  assert.equal(read?.listing.description, "Read a note back.");
  assert.deepEqual(read?.listing.inputSchema.required, ["key"]);
  assert.deepEqual(read?.listing.inputSchema.properties?.namespace, {
    type: "string",
    default: "notes",
  });
  assert.deepEqual(read?.defaults, { namespace: "notes" });
  assert.equal(catalog.get("mem__store")?.listing.description, "Does store.");
});

Deno.test("catalog: every listing names its group and upstream tool in _meta, a shortened one too; other _meta keys stay", () => {
  const group = "a-very-long-upstream-name-for-shortening";
  const upstream = healthy(group, ["trigger-long-running-operation", "echo"]);
  upstream.tools[1]._meta = { "com.example/kept": 1 };
  const catalog = buildCatalog([upstream]);
  const shortened = gatewayName(group, "trigger-long-running-operation");
  assert.equal(shortened.shortened, true);
  const long = catalog.get(shortened.name)?.listing;
  assert.ok(long);
  assert.deepEqual(originOf(long), {
    server: group,
    tool: "trigger-long-running-operation",
  });
  assert.deepEqual(catalog.get(`${group}__echo`)?.listing._meta, {
    "com.example/kept": 1,
    "io.agentd/origin": { server: group, tool: "echo" },
  });
});

Deno.test("catalog: two groups producing one gateway name are a reported collision, the first keeps it", () => {
  // With valid names this happens only when shortened names' hashes meet;
  // here the clash is made directly (objects built without the name checks).
  const collisions: string[][] = [];
  const catalog = buildCatalog(
    [healthy("alpha__x", ["y"]), healthy("alpha", ["x__y"])],
    {
      collided: (name, kept, dropped) => collisions.push([name, kept, dropped]),
    },
  );
  assert.deepEqual(collisions, [["alpha__x__y", "alpha", "alpha__x"]]);
  assert.equal(catalog.get("alpha__x__y")?.group, "alpha");
  assert.equal(catalog.get("alpha__x__y")?.tool, "x__y");
});

Deno.test("ranking: the tool asked for in words comes first, without any model", () => {
  const docs = [
    "memory store_memory Store a value under a key in a namespace",
    "memory update_memory Replace the value of an existing entry (use store_memory to create)",
    "browser-automation navigate Open a URL in the tab",
    "browser-automation screenshot Take a PNG screenshot of the page",
  ];
  const ranker = new TextRanker(docs, (doc) => doc);
  assert.match(ranker.rank("open a web page", 1)[0].item, /navigate/);
  assert.match(
    ranker.rank("take a picture of the screen", 1)[0].item,
    /screenshot/,
  );
  assert.deepEqual(ranker.rank("zzzz qqqq", 3), []);
});
