// Daemon A killed -9 in the middle of a team run on a shared PostgreSQL
// store: daemon B's lease sweep marks the run interrupted within the lease
// time, and no step runs twice (nobody re-runs it).

import assert from "node:assert/strict";
import { z } from "zod";
import { Run, Team } from "../../agents/schemas.ts";
import { LEASE_RENEW_MS } from "../../agents/leases.ts";
import { api, type Daemon, loggedAll, waitFor } from "../helpers.ts";
import { pgTestIgnore } from "../pg_server.ts";
import { startCluster } from "./cluster.ts";

const ignore = pgTestIgnore();

async function runsOf(daemon: Daemon, teamId: string): Promise<Run[]> {
  const reply = await api(daemon, "GET", `/v1/runs?team_id=${teamId}`);
  assert.equal(reply.status, 200, reply.text);
  return z.object({ data: z.array(Run) }).parse(reply.json).data;
}

Deno.test({
  name:
    "multi: A killed -9 mid team run → B marks the run interrupted within the lease time; nothing runs twice",
  ignore,
  async fn() {
    await using cluster = await startCluster(2);
    const [A, B] = cluster.daemons;
    const model = cluster.model;
    for (const name of ["first", "second"]) {
      const created = await api(A, "POST", "/v1/agents", {
        name,
        model: "openai/test-model",
      });
      assert.equal(created.status, 201, created.text);
    }
    const reply = await api(B, "POST", "/v1/teams", {
      name: "relay",
      agents: ["first", "second"],
    });
    assert.equal(reply.status, 201, reply.text);
    const team = Team.parse(reply.json);
    // The first step waits on the model long enough for A to die under it.
    model.script([
      { text: "never delivered", delay_ms: 60_000 },
      { text: "second step: must never be asked" },
    ]);
    const execution = fetch(`${A.url}/v1/teams/${team.id}/execute`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ task: "Relay this." }),
    }).then((r) => r.status, () => "connection lost");
    await waitFor(() => model.requests.length, (n) => n === 1);
    const [running] = await waitFor(
      () => runsOf(B, team.id),
      (runs) => runs.length === 1 && runs[0].status === "running",
    );
    const killedAt = Date.now();
    await A.stop("SIGKILL");
    assert.equal(await execution, "connection lost");

    // Three renewals missed make a lease stale; the pid check is faster here.
    const interrupted = await waitFor(
      async () =>
        Run.parse((await api(B, "GET", `/v1/runs/${running.id}`)).json),
      (run) => run.status === "interrupted",
      3 * LEASE_RENEW_MS + 5000,
    );
    assert.ok(Date.now() - killedAt <= 3 * LEASE_RENEW_MS + 5000);
    assert.equal(interrupted.stop_reason, "interrupted");
    assert.deepEqual(interrupted.steps, [], "no step finished");
    assert.ok(interrupted.finished_at);
    const interruptions = await loggedAll(
      B.logs,
      (line) => line.event === "runs_interrupted",
      1,
    );
    assert.equal(interruptions.length, 1, JSON.stringify(B.logs));
    // Nothing ran twice: the model was asked once, for the first step only.
    assert.equal(model.requests.length, 1);
    // A fresh daemon on the store finds nothing left to interrupt.
    const C = await cluster.spawn();
    assert.equal(
      (await runsOf(C, team.id)).map((run) => run.status).join(),
      "interrupted",
    );
    assert.equal(
      C.logs.filter((line) => line.event === "runs_interrupted").length,
      0,
    );
    assert.equal(model.requests.length, 1);
  },
});
