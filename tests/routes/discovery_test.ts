// Discovery without a session: the server card at /.well-known/mcp.json and
// the icons the listings name, on the real daemon (`agentd serve` with a
// token) and over stdio; the token still guards /mcp, the Host guard all.

import assert from "node:assert/strict";
import { decodeBase64 } from "../../platform/base64.ts";
import {
  Client,
  StreamableHTTPClientTransport,
  type Tool,
} from "../../platform/mcp_sdk.ts";
import { BUILTIN_ICONS } from "../../tools/icons.ts";
import { META_TOOLS } from "../../tools/gateway/on_demand.ts";
import { loadBuiltinServers } from "../../tools/registry.ts";
import {
  capturedLog,
  fixtureStdio,
  rawRequest,
  spawnServe,
  tempDir,
} from "../helpers.ts";
import { z } from "zod";
import { createApp } from "../../routes/mod.ts";
import { ServerCard } from "../../routes/api/server_card.ts";
import { HostedServer } from "../../tools/kit/host.ts";
import { defineServer, text, toolDefiner } from "../../tools/kit/mod.ts";
import { McpHttpEndpoint } from "../../tools/kit/transport/http_server.ts";
import { MemoryStore } from "../../platform/store/memory.ts";

const TOKEN = "discovery-token-0123456789";
const SVG = "image/svg+xml";

/** The one icon of a listing, or of serverInfo. */
function iconOf(item: { icons?: { src: string; mimeType?: string }[] }) {
  assert.equal(item.icons?.length, 1, JSON.stringify(item.icons));
  const [icon] = item.icons ?? [];
  return icon;
}

Deno.test("the server card and the icons answer without a token; /mcp still needs one; tools and serverInfo carry icons", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path, {
    env: { AGENTD_TOKEN: TOKEN, AGENTD_SERVERS: "gateway,memory" },
  });
  const client = new Client({ name: "discovery-test", version: "1.0.0" });
  try {
    // The card: no token, no session.
    const card = await fetch(`${daemon.url}/.well-known/mcp.json`);
    assert.equal(card.status, 200);
    assert.match(card.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(card.headers.get("access-control-allow-origin"), "*");
    const body = ServerCard.strict().parse(await card.json());
    // SEP-2127's path answers the same card.
    const sep = await fetch(`${daemon.url}/.well-known/mcp/server-card`);
    assert.equal(sep.status, 200);
    assert.deepEqual(await sep.json(), body);
    assert.equal(body.name, "io.agentd/agentd");
    assert.equal(typeof body.version, "string");
    assert.match(body.$schema, /server-card\.schema\.json$/);
    assert.deepEqual(
      body.remotes.map((remote: { url: string }) => remote.url),
      [
        `${daemon.url}/mcp`,
      ],
    );
    assert.deepEqual(body.remotes[0].authentication, {
      required: true,
      schemes: ["bearer"],
    });
    assert.ok(body.remotes[0].supportedProtocolVersions.includes("2025-11-25"));
    const specs = await loadBuiltinServers();
    const memory = specs.find((spec) => spec.id === "memory");
    assert.ok(memory);
    const servers = new Map<string, Record<string, unknown>>(
      body.servers.map((server: { name: string }) => [server.name, server]),
    );
    assert.deepEqual([...servers.keys()].sort(), [
      "io.agentd/gateway",
      "io.agentd/memory",
    ]);
    const memoryCard = servers.get("io.agentd/memory");
    assert.equal(memoryCard?.title, "Memory");
    assert.equal(memoryCard?.description, "Persistent memory for agents");
    assert.deepEqual(
      memoryCard?.toolNames,
      memory.tools.map((tool) => tool.name),
    );
    assert.deepEqual(memoryCard?.remotes, [{
      ...body.remotes[0],
      url: `${daemon.url}/mcp/memory`,
    }]);
    assert.deepEqual(memoryCard?.icons, [{
      src: `${daemon.url}/icons/memory.svg`,
      mimeType: SVG,
    }]);
    assert.ok(!JSON.stringify(body).includes(TOKEN));
    assert.ok(!JSON.stringify(body).includes(dir.path), "no data path");

    // /mcp without the token: still refused.
    const refused = await fetch(`${daemon.url}/mcp/memory`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: "{}",
    });
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    // Nor does the card open any other path: /health needs the token as before.
    const health = await fetch(`${daemon.url}/health`);
    assert.equal(health.status, 401);
    await health.body?.cancel();

    // The Host guard applies to the card and the icons like everything else.
    for (
      const path of [
        "/.well-known/mcp.json",
        "/.well-known/mcp/server-card",
        "/icons/memory.svg",
      ]
    ) {
      const rebound = await rawRequest(daemon.port, {
        method: "GET",
        path,
        headers: { host: "evil.example" },
      });
      assert.equal(rebound.status, 403, path);
    }

    // serverInfo: the server's icon inline.
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    const info = client.getServerVersion();
    assert.ok(info);
    const inline = iconOf(info);
    assert.equal(inline.mimeType, SVG);
    const prefix = `data:${SVG};base64,`;
    assert.ok(inline.src.startsWith(prefix), inline.src.slice(0, 40));
    assert.equal(
      new TextDecoder().decode(decodeBase64(inline.src.slice(prefix.length))),
      BUILTIN_ICONS.gateway.svg,
    );

    // tools/list: one URL per group on the origin the client used, served as SVG.
    const { tools } = await client.listTools();
    const byName = new Map<string, Tool>(
      tools.map((tool) => [tool.name, tool]),
    );
    const expected: Record<string, string> = {
      "memory__store_memory": "/icons/memory/entry.svg",
      "memory__search_memory": "/icons/memory/search.svg",
      "list_servers": "/icons/gateway/gateway.svg",
    };
    for (const [name, path] of Object.entries(expected)) {
      const tool = byName.get(name);
      assert.ok(tool, `${name} listed`);
      assert.deepEqual(iconOf(tool), {
        src: `${daemon.url}${path}`,
        mimeType: SVG,
      });
    }
    for (const tool of tools) assert.ok(tool.title, `${tool.name} has a title`);
    const served = new Set(
      tools.flatMap((tool) => tool.icons ?? []).map((icon) => icon.src),
    );
    served.add(`${daemon.url}/icons/memory.svg`);
    for (const src of served) {
      // No token: clients fetch icons as plain images.
      const icon = await fetch(src);
      assert.equal(icon.status, 200, src);
      assert.equal(icon.headers.get("content-type"), SVG);
      assert.match(icon.headers.get("cache-control") ?? "", /public/);
      assert.equal(icon.headers.get("x-content-type-options"), "nosniff");
      assert.match(
        await icon.text(),
        /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/,
      );
    }
    // A path that is not an icon is not public.
    const other = await fetch(`${daemon.url}/icons/nope.svg`);
    assert.equal(other.status, 401);
    await other.body?.cancel();
  } finally {
    await client.close();
    await daemon.stop();
  }
});

Deno.test("over stdio serverInfo carries the icon inline and tools carry none (no daemon URL)", async () => {
  await using dir = await tempDir();
  const client = new Client({ name: "discovery-stdio", version: "1.0.0" });
  await client.connect(fixtureStdio(["mcp", "memory", "--data-dir", dir.path]));
  try {
    const info = client.getServerVersion();
    assert.ok(info);
    assert.match(iconOf(info).src, /^data:image\/svg\+xml;base64,/);
    const { tools } = await client.listTools();
    assert.ok(tools.length > 0);
    for (const tool of tools) {
      assert.equal(tool.icons, undefined, tool.name);
      assert.ok(tool.title, tool.name);
    }
  } finally {
    await client.close();
  }
});

Deno.test("every built-in tool is in a group with an icon, and each group is its *_tools.ts module", async () => {
  for (const spec of await loadBuiltinServers()) {
    const icons = spec.icons;
    assert.ok(icons, `${spec.id} has icons`);
    assert.equal(icons, BUILTIN_ICONS[spec.id]);
    const tools = spec.id === "gateway"
      ? [...spec.tools, ...META_TOOLS]
      : spec.tools;
    const byGroup = new Map<string, string[]>();
    for (const tool of tools) {
      assert.ok(tool.group, `${spec.id}: ${tool.name} has a group`);
      byGroup.set(tool.group, [...byGroup.get(tool.group) ?? [], tool.name]);
    }
    assert.deepEqual(
      [...byGroup.keys()].sort(),
      Object.keys(icons.groups).sort(),
      `${spec.id}: an icon for each group, a group for each icon`,
    );
    for (const [group, icon] of Object.entries(icons.groups)) {
      assert.match(icon.svg, /^<svg [^>]*viewBox="0 0 24 24"/);
      if (spec.id === "gateway" && group === "on_demand") continue;
      const module: Record<string, { name?: unknown }> = await import(
        new URL(`../../tools/${spec.id}/${group}_tools.ts`, import.meta.url)
          .href
      );
      assert.deepEqual(
        Object.values(module).map((tool) => tool.name).sort(),
        [...byGroup.get(group) ?? []].sort(),
        `tools/${spec.id}/${group}_tools.ts`,
      );
    }
  }
});

Deno.test("a lone server without a token: its card says /mcp, no authentication, no icons it lacks", async () => {
  const tool = toolDefiner<null>();
  const spec = defineServer<null>({
    id: "tiny",
    namespace: "svc-tiny",
    title: "Tiny",
    version: "0.0.1",
    instructions: "Echoes text: nothing else.",
    tools: [tool({
      name: "echo",
      title: "Echo",
      description: "Echoes its text.",
      input: z.object({ text: z.string() }),
      handle: (_ctx, args) => Promise.resolve(text(args.text)),
    })],
    start: () => Promise.resolve({ context: null }),
  });
  const { log } = capturedLog();
  const store = new MemoryStore();
  const host = await HostedServer.start(spec, {
    store,
    log,
    config: {},
    dataDir: "/nonexistent/agentd-discovery-test",
  });
  const endpoint = new McpHttpEndpoint(host, { log, idleTimeoutMs: 60_000 });
  try {
    const app = createApp({
      hosts: [host],
      endpoints: new Map([["tiny", endpoint]]),
      layout: "single",
      bindHost: "127.0.0.1",
      allowedHosts: [],
      allowedOrigins: [],
      maxBodyBytes: 1024,
      version: "9.9.9",
      startedAt: Date.now(),
      log,
    });
    const reply = await app.request(
      new Request("http://localhost:4000/.well-known/mcp.json", {
        headers: { host: "localhost:4000" },
      }),
    );
    assert.equal(reply.status, 200);
    const card = ServerCard.strict().parse(await reply.json());
    assert.equal(card.version, "9.9.9");
    assert.equal(card.icons, undefined);
    assert.deepEqual(card.remotes.map((remote) => remote.url), [
      "http://localhost:4000/mcp",
    ]);
    assert.equal(card.remotes[0].authentication.required, false);
    assert.deepEqual(card.servers.map((server) => server.name), [
      "io.agentd/tiny",
    ]);
    assert.equal(card.servers[0].description, "Echoes text");
    assert.deepEqual(card.servers[0].toolNames, ["echo"]);
    assert.deepEqual(card.servers[0].remotes, card.remotes);
  } finally {
    await endpoint.close();
    await host.stop(1_000);
    await store.close();
  }
});
