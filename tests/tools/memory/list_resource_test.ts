// A list_memories page over list_budget comes back as a summary plus a
// resource holding the whole page (values uncut), read back with
// resources/read, and gone with the session that made it (DELETE).

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { spawnServe, tempDir, waitFor } from "../../helpers.ts";

Deno.test("memory: a long listing becomes a summary and a session resource, expiring with the session", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path, {
    env: { AGENTD_MEMORY__LIST_BUDGET: "4000" },
  });
  const url = new URL(`${daemon.url}/mcp/memory`);
  const open = async (at = url) => {
    const client = new Client({ name: "memory-list", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(at);
    await client.connect(transport);
    return { client, transport };
  };
  const storedResults = async () => {
    const health = await (await fetch(`${daemon.url}/health`)).json();
    return Number(health.servers.memory.details.results.count);
  };
  try {
    const { client, transport } = await open();
    const long = "x".repeat(3000) + "END";
    for (let index = 0; index < 8; index++) {
      const stored = await client.callTool({
        name: "store_memory",
        arguments: {
          namespace: "notes",
          key: `note-${index}`,
          value: index === 0 ? long : `value ${index} `.repeat(40),
        },
      });
      assert.notEqual(stored.isError, true, JSON.stringify(stored));
    }
    await client.callTool({
      name: "store_memory",
      arguments: { namespace: "short", key: "one", value: "small" },
    });

    // Under the budget: the usual JSON page, no resource.
    const small = await client.callTool({
      name: "list_memories",
      arguments: { namespace: "short" },
    });
    assert.ok(Array.isArray(small.content));
    assert.ok(!small.content.some((block) => block.type === "resource_link"));
    assert.equal(await storedResults(), 0);

    const listed = await client.callTool({
      name: "list_memories",
      arguments: { namespace: "notes" },
    });
    assert.notEqual(listed.isError, true);
    assert.ok(Array.isArray(listed.content));
    const summary = String(Reflect.get(listed.content[0], "text"));
    assert.match(summary, /^8 entries in "notes": note-0, note-1/);
    assert.match(summary, /over list_budget 4000/);
    assert.ok(summary.length < 1000, `${summary.length} characters`);
    const link = listed.content.find((block) => block.type === "resource_link");
    assert.ok(link && link.type === "resource_link");
    assert.match(link.uri, /^agentd:\/\/memory\/results\/[0-9a-f-]{36}$/);
    // Programs still get the page, with the URI.
    const structured = Object(listed.structuredContent);
    assert.equal(Reflect.get(structured, "count"), 8);
    assert.equal(Reflect.get(structured, "resource_uri"), link.uri);

    const read = await client.readResource({ uri: link.uri });
    assert.equal(read.contents[0].mimeType, "application/json");
    const page = JSON.parse(String(Reflect.get(read.contents[0], "text")));
    assert.equal(page.entries.length, 8);
    assert.equal(page.entries[0].value, long);
    assert.equal(await storedResults(), 1);

    await transport.terminateSession();
    await client.close();
    await waitFor(storedResults, (count) => count === 0);

    const second = await open();
    try {
      await assert.rejects(
        second.client.readResource({ uri: link.uri }),
        /unknown or expired/,
      );
    } finally {
      await second.client.close();
    }

    // Through the gateway's /mcp: read there, and gone when that session ends.
    const viaGateway = await open(new URL(`${daemon.url}/mcp`));
    const relayed = await viaGateway.client.callTool({
      name: "memory__list_memories",
      arguments: { namespace: "notes" },
    });
    assert.ok(Array.isArray(relayed.content));
    const relayedLink = relayed.content.find((block) =>
      block.type === "resource_link"
    );
    assert.ok(relayedLink && relayedLink.type === "resource_link");
    const relayedRead = await viaGateway.client.readResource({
      uri: relayedLink.uri,
    });
    assert.match(String(Reflect.get(relayedRead.contents[0], "text")), /END"/);
    assert.equal(await storedResults(), 1);
    await viaGateway.transport.terminateSession();
    await viaGateway.client.close();
    await waitFor(storedResults, (count) => count === 0);
  } finally {
    await daemon.stop();
  }
});
