// Cancelling a team run (POST /v1/runs/{id}/cancel): a run executing in this
// daemon stops at once (its turn in progress aborted), one executing in
// another daemon on the same store stops at that daemon's next lease renewal;
// an ended run is a 409, a run the caller may not read a 404.

import assert from "node:assert/strict";
import { Run, Team } from "../../agents/schemas.ts";
import { type Reply, waitFor } from "../helpers.ts";
import { ALICE_TOKEN, type Stack, startPeer, startStack } from "./stack.ts";

/** A sequential team of two agents whose second turn waits for the model for 30 s. */
async function slowRun(stack: Stack): Promise<{
  run: Run;
  executed: Promise<Reply>;
}> {
  for (const name of ["alpha", "beta"]) {
    const created = await stack.request("POST", "/v1/agents", {
      name,
      system_prompt: `You are ${name}.`,
    });
    assert.equal(created.status, 201, created.text);
  }
  const team = await stack.request("POST", "/v1/teams", {
    name: "slow-crew",
    agents: ["alpha", "beta"],
  });
  assert.equal(team.status, 201, team.text);
  stack.model.script([{ text: "first" }, { text: "late", delay_ms: 30_000 }]);
  const executed = stack.request(
    "POST",
    `/v1/teams/${Team.parse(team.json).id}/execute`,
    { task: "Take your time." },
  );
  // The first turn is stored and the second one waits for the model.
  const run = await waitFor(
    async () => {
      const listed = await stack.request("GET", "/v1/runs");
      const runs = Run.array().parse(
        (listed.json as { data: unknown }).data,
      );
      return runs.find((run) => run.steps.length === 1);
    },
    (run) => run !== undefined && stack.model.requests.length === 2,
  );
  assert.ok(run);
  assert.equal(run.status, "running");
  return { run, executed };
}

Deno.test("run cancel: a run executing here stops at once, its waiting turn aborted; an ended run is a 409, another agent's a 404", async () => {
  await using stack = await startStack();
  const { run, executed } = await slowRun(stack);

  // An agent that may not act as alpha and beta cannot see the run, so
  // cannot cancel it either.
  const hidden = await stack.request(
    "POST",
    `/v1/runs/${run.id}/cancel`,
    {},
    { authorization: `Bearer ${ALICE_TOKEN}` },
  );
  assert.equal(hidden.status, 404, hidden.text);

  const cancelled = await stack.request(
    "POST",
    `/v1/runs/${run.id}/cancel`,
    {},
  );
  assert.equal(cancelled.status, 200, cancelled.text);
  const ended = Run.parse(cancelled.json);
  assert.equal(ended.status, "cancelled");
  assert.equal(ended.stop_reason, "cancelled");
  assert.equal(ended.error?.code, "cancelled");
  assert.match(ended.error?.message ?? "", /Cancelled by the operator/);
  assert.equal(ended.steps[0].output, "first");
  assert.ok(ended.finished_at !== null);

  // The caller of execute gets the same ended run.
  const reply = await executed;
  assert.equal(reply.status, 200, reply.text);
  assert.deepEqual(Run.parse(reply.json), ended);
  const stored = await stack.request("GET", `/v1/runs/${run.id}`);
  assert.deepEqual(Run.parse(stored.json), ended);

  const again = await stack.request("POST", `/v1/runs/${run.id}/cancel`, {});
  assert.equal(again.status, 409, again.text);
  assert.match(again.text, /is cancelled; only a running run can be cancelled/);
  const unknown = await stack.request("POST", "/v1/runs/run_nope/cancel", {});
  assert.equal(unknown.status, 404, unknown.text);
});

Deno.test("run cancel: asked through another daemon on the store, the run stops at its daemon's next lease renewal", async () => {
  await using stack = await startStack({ leaseRenewMs: 50 });
  const { run, executed } = await slowRun(stack);

  // A second agent service on the same store: another daemon.
  await using peer = await startPeer(stack.store);
  const asked = await peer.service.cancelRun(run.id);
  assert.equal(asked.settled, false);
  assert.equal(asked.run.status, "running");

  const reply = await executed;
  assert.equal(reply.status, 200, reply.text);
  const ended = Run.parse(reply.json);
  assert.equal(ended.status, "cancelled");
  assert.equal(ended.stop_reason, "cancelled");
  assert.equal((await peer.service.getRun(run.id)).status, "cancelled");
});
