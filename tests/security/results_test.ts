// A big result kept as a resource (`agentd://<server>/results/<id>`: a long
// memory listing, a page's HTML, a screenshot) is read back only by the
// caller whose call made it. Another agent holding the URI (passed to it in
// a message, say) reads it as unknown, through the gateway or the server's
// own endpoint. A real `agentd serve` with two agent tokens.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { spawnServeWith, tempDir } from "../helpers.ts";
import { gatewayClient } from "../tools/gateway/upstreams.ts";

const OPERATOR = "operator-token-0123456789-results";
const ALICE = "alice-agent-token-0123456789-results";
const BOB = "bob-agent-token-0123456789-results";

async function memoryClient(url: string, token: string) {
  const client = new Client({ name: "results-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp/memory`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return Object.assign(client, {
    [Symbol.asyncDispose]: () => client.close(),
  });
}

Deno.test("security results: an agent reads no other caller's stored result, however it got the URI", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServeWith(dir.path, {
    token: OPERATOR,
    agent_tokens: { alice: ALICE, bob: BOB },
    memory: { list_budget: 1000 },
  });
  try {
    await using alice = await memoryClient(daemon.url, ALICE);
    const secret = "alice's private note ".repeat(80);
    const stored = await alice.callTool({
      name: "store_memory",
      arguments: { namespace: "alice", key: "today", value: secret },
    });
    assert.notEqual(stored.isError, true, JSON.stringify(stored));
    const listed = await alice.callTool({
      name: "list_memories",
      arguments: { namespace: "alice" },
    });
    const uri = String(
      Reflect.get(Object(listed.structuredContent), "resource_uri"),
    );
    assert.match(uri, /^agentd:\/\/memory\/results\/[0-9a-f-]{36}$/);
    // Alice reads her own, whole.
    const own = await alice.readResource({ uri });
    assert.match(String(Reflect.get(own.contents[0], "text")), /private note/);

    // Bob, with the URI, on the server's endpoint and through the gateway.
    await using bob = await memoryClient(daemon.url, BOB);
    await assert.rejects(bob.readResource({ uri }), /unknown or expired/);
    await using bobGateway = await gatewayClient(daemon.url, BOB);
    await assert.rejects(
      bobGateway.readResource({ uri }),
      /unknown or expired/,
    );
    // Still Alice's afterwards: the refusals took nothing away.
    const again = await alice.readResource({ uri });
    assert.match(
      String(Reflect.get(again.contents[0], "text")),
      /private note/,
    );
  } finally {
    await daemon.stop();
  }
});
