// A conversation belongs to the agent that keeps it: another agent naming the
// same session id reads and writes a conversation of its own. Checked on a
// real `agentd serve` (its store a KV file), where a conversation that goes on
// is answered from what the daemon keeps in memory rather than from the store
// (kv_conversations.ts): that path must keep agents apart too.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { spawnServeWith, tempDir } from "../helpers.ts";

const OPERATOR = "operator-token-0123456789-conversations";
const ALICE = "alice-agent-token-0123456789-conversations";
const BOB = "bob-agent-token-0123456789-conversations";

async function memoryClient(url: string, token: string) {
  const client = new Client({ name: "conversations-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp/memory`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return Object.assign(client, {
    [Symbol.asyncDispose]: () => client.close(),
  });
}

/** The contents of a session's history as `client` sees it. */
async function history(client: Client, session: string): Promise<string[]> {
  const result = await client.callTool({
    name: "get_conversation_history",
    arguments: { session_id: session },
  });
  assert.notEqual(result.isError, true, JSON.stringify(result));
  const messages = Reflect.get(Object(result.structuredContent), "messages");
  assert.ok(Array.isArray(messages), JSON.stringify(result));
  return messages.map((m) => String(Reflect.get(Object(m), "content")));
}

async function store(client: Client, session: string, text: string) {
  const result = await client.callTool({
    name: "store_conversation",
    arguments: { session_id: session, messages: [text] },
  });
  assert.notEqual(result.isError, true, JSON.stringify(result));
}

Deno.test("security conversations: an agent naming another's session id sees and changes only its own conversation", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServeWith(dir.path, {
    token: OPERATOR,
    agent_tokens: { alice: ALICE, bob: BOB },
  });
  try {
    await using alice = await memoryClient(daemon.url, ALICE);
    await using bob = await memoryClient(daemon.url, BOB);
    await store(alice, "shared", "alice's secret plan");
    // Read twice: the second is answered from what the daemon keeps.
    assert.deepEqual(await history(alice, "shared"), ["alice's secret plan"]);
    assert.deepEqual(await history(alice, "shared"), ["alice's secret plan"]);

    assert.deepEqual(await history(bob, "shared"), [], "bob sees none of it");
    await store(bob, "shared", "bob was here");
    assert.deepEqual(await history(bob, "shared"), ["bob was here"]);
    assert.deepEqual(
      await history(alice, "shared"),
      ["alice's secret plan"],
      "bob's write went to his own conversation",
    );
  } finally {
    await daemon.stop();
  }
});
