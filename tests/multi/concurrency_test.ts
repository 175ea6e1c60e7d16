// 4 daemons × 50 concurrent clients creating agents on one PostgreSQL store:
// every created agent is there, none twice, each contested name won exactly
// once, and all four daemons give the same answer afterwards.

import assert from "node:assert/strict";
import { Agent } from "../../agents/schemas.ts";
import { api, type Daemon } from "../helpers.ts";
import { pgTestIgnore } from "../pg_server.ts";
import { allAgents, startCluster } from "./cluster.ts";

const ignore = pgTestIgnore();
const CLIENTS_PER_DAEMON = 50;
const AGENTS_PER_CLIENT = 2;
const CONTESTED = 10;

Deno.test({
  name:
    "multi: 4 daemons × 50 concurrent clients writing agents: no lost or duplicated write, the same answer everywhere",
  ignore,
  async fn() {
    await using cluster = await startCluster(4);
    const daemons = cluster.daemons;
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
  },
});
