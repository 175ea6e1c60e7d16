// An agent-bound caller reaches only its own namespace, whatever the
// arguments say: every tool is tried against another agent's namespace.

import assert from "node:assert/strict";
import type { Client } from "../../../platform/mcp_sdk.ts";
import { type Daemon, spawnServe, tempDir } from "../../helpers.ts";
import { call as ok, connectMemory } from "./scenario.ts";

async function connect(daemon: Daemon, token?: string): Promise<Client> {
  return (await connectMemory(daemon, token)).client;
}

Deno.test("memory isolation: an agent cannot read, list, search, update, delete or cross_reference another namespace", async () => {
  await using dir = await tempDir();
  const alice = "alice-token-" + crypto.randomUUID();
  const bob = "bob-token-" + crypto.randomUUID();
  const operator = "operator-token-" + crypto.randomUUID();
  const daemon = await spawnServe(dir.path, {
    env: {
      AGENTD_TOKEN: operator,
      AGENTD_AGENT_TOKENS: JSON.stringify({ alice, bob }),
    },
  });
  const local = await connect(daemon, operator); // unbound: the daemon token
  const asAlice = await connect(daemon, alice);
  const asBob = await connect(daemon, bob);
  try {
    await ok(local, "store_memory", {
      namespace: "bob",
      key: "secret-plan",
      value: "bob's plan: launch on friday",
    });
    await ok(asBob, "store_memory", {
      namespace: "bob",
      key: "diary",
      value: "bob wrote this",
    });
    await ok(asAlice, "store_memory", {
      namespace: "alice",
      key: "own",
      value: "alice's own note",
    });

    const attempts: [string, Record<string, unknown>][] = [
      ["store_memory", { namespace: "bob", key: "planted", value: "x" }],
      ["retrieve_memory", { namespace: "bob", key: "secret-plan" }],
      ["update_memory", {
        namespace: "bob",
        key: "secret-plan",
        value: "overwritten",
      }],
      ["delete_memory", { namespace: "bob", key: "secret-plan" }],
      ["list_memories", { namespace: "bob" }],
      ["search_memory", { namespace: "bob", query: "plan" }],
      ["cross_reference", { query: "plan", namespaces: ["alice", "bob"] }],
      ["get_agent_context", { agent_name: "bob" }],
    ];
    for (const [name, args] of attempts) {
      const result = await asAlice.callTool({ name, arguments: args });
      assert.equal(result.isError, true, `${name} must be refused`);
      const text = JSON.stringify(result.content);
      assert.match(
        text,
        /Access denied: agent \\"alice\\" may only use its own namespace/,
        name,
      );
      assert.doesNotMatch(
        text,
        /launch on friday/,
        `${name} leaked bob's value`,
      );
    }

    // Bob's data is untouched, and alice's own namespace works.
    const plan = await ok(asBob, "retrieve_memory", {
      namespace: "bob",
      key: "secret-plan",
    });
    assert.equal(plan.value, "bob's plan: launch on friday");
    const listed = await ok(asBob, "list_memories", { namespace: "bob" });
    assert.deepEqual(
      (listed.entries as { key: string }[]).map((entry) => entry.key),
      ["diary", "secret-plan"],
    );
    assert.equal(
      (await ok(asAlice, "search_memory", {
        namespace: "alice",
        query: "note",
      })).mode,
      "hybrid",
    );
    const context = await ok(asAlice, "get_agent_context", {
      agent_name: "alice",
    });
    assert.deepEqual(
      (context.entries as { key: string }[]).map((entry) => entry.key),
      ["own"],
    );

    // Conversations are per agent: the same session id names different conversations.
    await ok(asAlice, "store_conversation", {
      session_id: "s1",
      messages: [{ role: "user", content: "alice only" }],
    });
    const bobs = await ok(asBob, "get_conversation_history", {
      session_id: "s1",
    });
    assert.equal(bobs.count, 0);
    const alices = await ok(asAlice, "get_conversation_history", {
      session_id: "s1",
    });
    assert.equal(alices.count, 1);
    const aliceContext = await ok(asAlice, "get_agent_context", {
      agent_name: "alice",
    });
    assert.equal((aliceContext.conversations as unknown[]).length, 1);

    const health = await (await fetch(`${daemon.url}/health`, {
      headers: { authorization: `Bearer ${operator}` },
    })).json();
    assert.equal(health.servers.memory.details.access_denied, attempts.length);
  } finally {
    for (const client of [local, asAlice, asBob]) await client.close();
    assert.equal((await daemon.stop()).code, 0);
  }
});
