// Tools on demand: a real `agentd serve` with every built-in server and
// `gateway.tools_mode: on_demand`. Its /mcp lists three meta-tools; a client
// may still ask for every tool; an agent on /v1 finds memory__store_memory
// by searching and calls it through call_tool (scripted model server).

import assert from "node:assert/strict";
import { SendReply } from "../../../agents/schemas.ts";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { api, spawnServe, tempDir } from "../../helpers.ts";
import { startModelServer } from "../../agents/model_server.ts";
import { call, textOf } from "./upstreams.ts";

async function client(
  url: string,
  mode?: "all" | "on_demand",
): Promise<Client & AsyncDisposable> {
  const made = new Client({ name: "on-demand-test", version: "1.0.0" }, {
    capabilities: mode ? { experimental: { "io.agentd/tools": { mode } } } : {},
  });
  await made.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return Object.assign(made, { [Symbol.asyncDispose]: () => made.close() });
}

Deno.test("on demand: /mcp with every built-in server lists ≤ 8 tools, ≥ 10× fewer bytes; an agent finds and calls memory__store_memory", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  // Per-tool overrides: one tool hidden, one redescribed with a default argument.
  const config = `${dir.path}/agentd.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      gateway: {
        tool_overrides: {
          memory__delete_memory: { hidden: true },
          memory__retrieve_memory: {
            description: "Read a note back.",
            defaults: { namespace: "scribe" },
          },
        },
      },
    }),
  );
  const daemon = await spawnServe(dir.path, {
    extra: ["--config", config],
    env: {
      ...model.env,
      AGENTD_GATEWAY__TOOLS_MODE: "on_demand",
      AGENTD_AGENTS__DEFAULT_MODEL: "openai/default-model",
    },
  });
  try {
    await using lean = await client(daemon.url);
    await using full = await client(daemon.url, "all");
    const few = (await lean.listTools()).tools;
    const every = (await full.listTools()).tools;
    assert.deepEqual(few.map((tool) => tool.name), [
      "search_tools",
      "describe_tool",
      "call_tool",
    ]);
    assert.ok(few.length <= 8);
    assert.ok(every.some((tool) => tool.name === "memory__store_memory"));
    const ratio = JSON.stringify(every).length / JSON.stringify(few).length;
    assert.ok(ratio >= 10, `only ${ratio.toFixed(1)}× fewer bytes`);

    // Search, describe, call, and the errors naming what is wrong.
    const found = await call(lean, "search_tools", {
      query: "store a memory",
    });
    assert.match(textOf(found).split("\n")[0], /^memory__store_memory\(/);
    const described = await call(lean, "describe_tool", {
      name: "memory__store_memory",
    });
    assert.match(textOf(described), /"inputSchema"/);
    const unknown = await call(lean, "describe_tool", {
      name: "memory__stor_memory",
    });
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /Did you mean memory__store_memory/);
    const bad = await call(lean, "search_tools", { query: "" });
    assert.equal(bad.isError, true);
    assert.match(textOf(bad), /query/);
    // The gateway's own tools are in the catalog too.
    const servers = await call(lean, "call_tool", { name: "list_servers" });
    assert.notEqual(servers.isError, true, textOf(servers));
    assert.match(textOf(servers), /"memory"/);
    // ... run as tools/call runs them: bad arguments are refused before the
    // tool runs and audited as an invalid call of gateway.<tool>.
    const invalid = await call(lean, "call_tool", {
      name: "get_server_health",
      arguments: {},
    });
    assert.equal(invalid.isError, true);
    assert.match(textOf(invalid), /Invalid arguments for get_server_health/);
    const audited = await api(
      daemon,
      "GET",
      "/admin/policy/audit?server=gateway&tool=get_server_health",
    );
    assert.equal(audited.status, 200, audited.text);
    assert.deepEqual(
      Object(audited.json).records.map((record: { decision: string }) =>
        record.decision
      ),
      ["invalid"],
    );

    // An agent whose tools are the gateway's: the model sees three tools.
    const created = await api(daemon, "POST", "/v1/agents", {
      name: "scribe",
      tools: ["gateway"],
    });
    assert.equal(created.status, 201, created.text);
    model.script([
      {
        tool_calls: [{
          name: "search_tools",
          arguments: { query: "store a note in memory" },
        }],
      },
      {
        tool_calls: [{
          name: "call_tool",
          arguments: {
            name: "memory__store_memory",
            arguments: { namespace: "scribe", key: "note", value: "on demand" },
          },
        }],
      },
      { text: "Stored." },
    ]);
    const sent = await api(daemon, "POST", "/v1/agents/scribe/send", {
      message: "remember: on demand",
    });
    assert.equal(sent.status, 200, sent.text);
    const reply = SendReply.parse(sent.json);
    assert.equal(reply.content, "Stored.");
    assert.match(reply.tool_calls[0].result, /memory__store_memory/);
    assert.equal(
      reply.tool_calls[1].is_error,
      false,
      reply.tool_calls[1].result,
    );
    const sentTools = model.requests[0].body.tools;
    assert.ok(Array.isArray(sentTools));
    assert.deepEqual(
      sentTools.map((tool: { function: { name: string } }) =>
        tool.function.name
      )
        .sort(),
      ["call_tool", "describe_tool", "search_tools"],
    );
    // Stored for real: read back through the gateway.
    const read = await call(full, "memory__retrieve_memory", { key: "note" });
    assert.match(textOf(read), /on demand/);
    const retrieve = every.find((tool) =>
      tool.name === "memory__retrieve_memory"
    );
    assert.equal(retrieve?.description, "Read a note back.");
    assert.deepEqual(retrieve?.inputSchema.required, ["key"]);
    assert.ok(!every.some((tool) => tool.name === "memory__delete_memory"));
    const hidden = await call(lean, "call_tool", {
      name: "memory__delete_memory",
      arguments: { namespace: "scribe", key: "note" },
    });
    assert.equal(hidden.isError, true);

    // A big result of a built-in server is a resource, read back through /mcp.
    const big = "<p>ten bytes</p>".repeat(4000);
    await using page = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen() {} },
      () =>
        new Response(`<html><body>${big}</body></html>`, {
          headers: { "content-type": "text/html" },
        }),
    );
    const opened = await call(full, "browser-automation__navigate", {
      url: `http://127.0.0.1:${page.addr.port}/`,
    });
    assert.notEqual(opened.isError, true, textOf(opened));
    const html = await call(full, "browser-automation__get_html", {});
    assert.notEqual(html.isError, true, textOf(html));
    const link = html.content.find((block) => block.type === "resource_link");
    assert.ok(link && link.type === "resource_link", textOf(html));
    const resource = await full.readResource({ uri: link.uri });
    const text = String(Reflect.get(resource.contents[0], "text"));
    assert.equal(text.length, html.structuredContent?.total_chars);
    assert.ok(text.includes(big));
  } finally {
    await daemon.stop();
  }
});
