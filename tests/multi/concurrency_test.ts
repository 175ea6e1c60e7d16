// 4 daemons × 50 concurrent clients creating agents (the daemon store) and
// memories (the memory server hosted on the same PostgreSQL): every write is
// there, none twice, each contested agent name won exactly once, and all four
// daemons give the same answer afterwards.

import assert from "node:assert/strict";
import { z } from "zod";
import { Agent } from "../../agents/schemas.ts";
import { api, type Daemon } from "../helpers.ts";
import { pgTestIgnore } from "../pg_server.ts";
import { allAgents, startCluster } from "./cluster.ts";
import { callJson, gatewayClient } from "../tools/gateway/upstreams.ts";
import type { Client } from "../../platform/mcp_sdk.ts";

async function allMemories(client: Client): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await callJson(client, "memory__list_memories", {
      namespace: "load",
      limit: 200,
      ...(cursor ? { cursor } : {}),
    });
    const entries = z.array(z.object({ key: z.string() })).parse(page.entries);
    keys.push(...entries.map((e) => e.key));
    const next = z.string().nullable().parse(page.next_cursor);
    cursor = next ?? undefined;
  } while (cursor !== undefined);
  return keys.sort();
}

const ignore = pgTestIgnore();
const CLIENTS_PER_DAEMON = 50;
const AGENTS_PER_CLIENT = 2;
const CONTESTED = 10;

Deno.test({
  name:
    "multi: 4 daemons × 50 concurrent clients writing agents and memories: no lost or duplicated write, the same answer everywhere",
  ignore,
  async fn() {
    await using cluster = await startCluster(4, {}, { memory: true });
    const daemons = cluster.daemons;
    const mcp = await Promise.all(daemons.map((d) => gatewayClient(d.url)));
    const created: string[] = [];
    const contestedWins = new Map<string, number>();
    const client = async (daemon: Daemon, d: number, c: number) => {
      for (let i = 0; i < AGENTS_PER_CLIENT; i++) {
        const name = `agent-${d}-${c}-${i}`;
        const reply = await api(daemon, "POST", "/v1/agents", {
          name,
          model: "openai/test-model",
        });
        assert.equal(reply.status, 201, reply.text);
        created.push(Agent.parse(reply.json).name);
      }
      await callJson(mcp[d], "memory__store_memory", {
        namespace: "load",
        key: `m-${d}-${c}`,
        value: `written through daemon ${d} by client ${c}`,
      });
      // Every client of every daemon also races for one of a few names.
      const name = `contested-${c % CONTESTED}`;
      const reply = await api(daemon, "POST", "/v1/agents", {
        name,
        model: "openai/test-model",
      });
      assert.ok([201, 409].includes(reply.status), reply.text);
      if (reply.status === 201) {
        contestedWins.set(name, (contestedWins.get(name) ?? 0) + 1);
      }
    };
    await Promise.all(
      daemons.flatMap((daemon, d) =>
        Array.from(
          { length: CLIENTS_PER_DAEMON },
          (_, c) => client(daemon, d, c),
        )
      ),
    );
    const expected = daemons.length * CLIENTS_PER_DAEMON * AGENTS_PER_CLIENT;
    assert.equal(created.length, expected);
    assert.equal(contestedWins.size, CONTESTED);
    for (const [name, wins] of contestedWins) {
      assert.equal(wins, 1, `${name} was created ${wins} times`);
    }
    const answers = await Promise.all(daemons.map(allAgents));
    const names = answers.map((agents) => agents.map((a) => a.name).sort());
    assert.equal(names[0].length, expected + CONTESTED);
    assert.equal(new Set(names[0]).size, names[0].length, "no duplicates");
    for (const name of created) assert.ok(names[0].includes(name), name);
    for (const other of names.slice(1)) assert.deepEqual(other, names[0]);
    const memories = await Promise.all(mcp.map(allMemories));
    assert.equal(memories[0].length, daemons.length * CLIENTS_PER_DAEMON);
    assert.equal(new Set(memories[0]).size, memories[0].length);
    for (const other of memories.slice(1)) {
      assert.deepEqual(other, memories[0]);
    }
    await Promise.all(mcp.map((client) => client.close()));
  },
});
