// PostgreSQL stopped and started under traffic from two daemons: while it is
// away writes get a clear 503 and /health says degraded; nothing is written
// locally (both daemons agree afterwards); service resumes by itself.

import assert from "node:assert/strict";
import { z } from "zod";
import { api, type Daemon, waitFor } from "../helpers.ts";
import { pgTestIgnore } from "../pg_server.ts";
import { allAgents, startCluster } from "./cluster.ts";

const ignore = pgTestIgnore();
const ErrorBody = z.object({
  error: z.object({ code: z.string(), message: z.string() }),
});
const Health = z.object({
  status: z.string(),
  store: z.object({ kind: z.string(), status: z.string() }),
});

async function names(daemon: Daemon): Promise<string[]> {
  return (await allAgents(daemon)).map((a) => a.name).sort();
}

Deno.test({
  name:
    "multi: PostgreSQL stopped and started during traffic → 503s and degraded health, then normal service, no divergence",
  ignore,
  async fn() {
    await using cluster = await startCluster(2, {
      AGENTD_STORE_CONNECT_TIMEOUT_MS: "2000",
      AGENTD_STORE_STATEMENT_TIMEOUT_MS: "2000",
    });
    const daemons = cluster.daemons;
    const outcomes = new Map<string, number>();
    const unavailable: string[] = [];
    let traffic = true;
    let sequence = 0;
    const client = async (daemon: Daemon) => {
      while (traffic) {
        const name = `w-${++sequence}`;
        const reply = await api(daemon, "POST", "/v1/agents", {
          name,
          model: "openai/test-model",
        }).catch((error) => {
          traffic = false;
          throw new Error(
            `${daemon.url} is gone: ${daemon.stray.join("\n")} ${
              JSON.stringify(daemon.logs.slice(-5))
            }`,
            { cause: error },
          );
        });
        outcomes.set(name, reply.status);
        if (reply.status === 503) {
          const body = ErrorBody.parse(reply.json);
          assert.equal(body.error.code, "unavailable");
          unavailable.push(body.error.message);
        } else {
          assert.equal(reply.status, 201, reply.text);
        }
      }
    };
    const clients = Promise.all(
      daemons.flatMap((d) => [client(d), client(d)]),
    );
    clients.catch(() => {}); // awaited (and rethrown) in finally
    const count = (status: number) =>
      [...outcomes.values()].filter((s) => s === status).length;
    try {
      await waitFor(() => count(201), (n) => n >= 10);
      await cluster.pg.stop();
      await waitFor(() => count(503), (n) => n >= 4, 30_000);
      for (const daemon of daemons) {
        const health = Health.parse((await api(daemon, "GET", "/health")).json);
        assert.equal(health.status, "degraded");
        assert.deepEqual(health.store.kind, "postgres");
        assert.equal(health.store.status, "unavailable");
      }
      assert.match(
        unavailable[0],
        /PostgreSQL store at postgres:\/\/.*unreachable|did not answer/,
      );
      const before = count(201);
      await cluster.pg.start();
      await waitFor(() => count(201), (n) => n >= before + 10, 30_000);
    } finally {
      traffic = false;
      await clients;
    }
    for (const daemon of daemons) {
      const health = Health.parse((await api(daemon, "GET", "/health")).json);
      assert.equal(health.store.status, "ok");
      assert.equal(health.status, "ok");
    }
    const [a, b] = await Promise.all(daemons.map(names));
    assert.deepEqual(a, b, "both daemons see the same agents");
    for (const [name, status] of outcomes) {
      // A 503 may hide a commit the server made as it went down; a 201 never lies.
      if (status === 201) assert.ok(a.includes(name), `${name} lost`);
    }
    const text = JSON.stringify(daemons.map((d) => d.logs));
    assert.ok(!text.includes(cluster.pg.password), "password in logs");
    assert.ok(!unavailable.join().includes(cluster.pg.password));
  },
});
