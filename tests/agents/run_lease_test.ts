// Run leases: a daemon marks interrupted only the runs whose process is gone
// (legacy or malformed lease, dead pid on this host, stale heartbeat), never a
// live peer's on the same store; a dead peer's runs are swept while it runs.

import assert from "node:assert/strict";
import { IdSource } from "../../agents/ids.ts";
import { Repository, RunLease } from "../../agents/repository.ts";
import { Run, Team } from "../../agents/schemas.ts";
import { scoped, type Store } from "../../platform/store/mod.ts";
import { openKvStore } from "../../platform/store/kv.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { waitFor } from "../helpers.ts";
import { startPeer, startStack } from "./stack.ts";

const ids = new IdSource();

function runningRun(): Run {
  return {
    id: ids.next("run"),
    team_id: ids.next("team"),
    strategy: "sequential",
    status: "running",
    task: "t",
    context: {},
    steps: [],
    output: null,
    stop_reason: null,
    iterations: 0,
    usage: { input_tokens: 0, output_tokens: 0 },
    error: null,
    created_at: new Date().toISOString(),
    finished_at: null,
  };
}

/** Writes a running run as another process would, with `lease` as its active_run value. */
async function seedRun(
  store: Store,
  lease: Partial<RunLease> | boolean | string,
): Promise<string> {
  const run = runningRun();
  const agents = scoped(store, ["agents"]);
  await new Repository(agents).saveRun(run, {
    owner: crypto.randomUUID(),
    host: Deno.hostname(),
    pid: Deno.pid,
    heartbeat_at: new Date().toISOString(),
  });
  const value = typeof lease === "object"
    ? {
      owner: crypto.randomUUID(),
      host: Deno.hostname(),
      pid: Deno.pid,
      heartbeat_at: new Date().toISOString(),
      ...lease,
    }
    : lease;
  await agents.set(["active_run", run.id], value);
  return run.id;
}

async function status(store: Store, id: string): Promise<string> {
  return (await new Repository(scoped(store, ["agents"])).getRun(id)).status;
}

async function activeRun(store: Store, id: string) {
  return (await store.get(["agents", "active_run", id]))?.value;
}

Deno.test("run lease: a second service starting on the store leaves a live run alone; it renews its lease and completes", async () => {
  await using stack = await startStack({ noServers: true, leaseRenewMs: 50 });
  assert.equal(
    (await stack.request("POST", "/v1/agents", { name: "slow" })).status,
    201,
  );
  const created = await stack.request("POST", "/v1/teams", {
    name: "slowteam",
    agents: ["slow"],
  });
  const team = Team.parse(created.json);
  stack.model.script([{ text: "done, slowly", delay_ms: 3000 }]);
  const executed = stack.request("POST", `/v1/teams/${team.id}/execute`, {
    task: "take your time",
  });
  await waitFor(() => stack.model.requests.length, (count) => count === 1);
  const listed = await stack.request("GET", "/v1/runs");
  const runId = Run.parse(Object(listed.json).data[0]).id;
  const first = RunLease.parse(await activeRun(stack.store, runId));
  assert.deepEqual(
    { owner: first.owner, host: first.host, pid: first.pid },
    { owner: stack.service.instanceId, host: Deno.hostname(), pid: Deno.pid },
  );

  // B sweeps every 500 ms and takes a lease older than 1.5 s for a dead one:
  // A's run outlives that only because A renews its lease (every 50 ms; the
  // margin is for a loaded machine, whose timers run late).
  await using peer = await startPeer(stack.store, { leaseRenewMs: 500 });
  assert.notEqual(peer.service.instanceId, stack.service.instanceId);
  assert.equal(await status(stack.store, runId), "running");
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.equal(await status(stack.store, runId), "running", "after sweeps");
  const renewed = RunLease.parse(await activeRun(stack.store, runId));
  assert.equal(renewed.owner, first.owner);
  assert.ok(renewed.heartbeat_at > first.heartbeat_at, "renewed");

  const reply = await executed;
  assert.equal(reply.status, 200, reply.text);
  const run = Run.parse(reply.json);
  assert.equal(run.status, "completed");
  assert.equal(run.output, "done, slowly");
  assert.deepEqual(peer.interrupted(), []);
  assert.equal(await activeRun(stack.store, runId), undefined, "released");
  const trouble = stack.logs.filter((line) =>
    line.event === "runs_interrupted" || line.event.startsWith("run_lease")
  );
  assert.deepEqual(trouble, [], "nothing interrupted, no lease lost");
});

Deno.test({
  name:
    "run lease: at start, a lease of a dead process on this host is interrupted; one of a live process is not",
  ignore: Deno.build.os === "windows",
  async fn() {
    const done = new Deno.Command(Deno.execPath(), {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).spawn();
    await done.status;
    const alive = new Deno.Command(Deno.execPath(), {
      args: ["eval", "setTimeout(() => {}, 60_000)"],
      stdout: "null",
      stderr: "null",
    }).spawn();
    const store = new MemoryStore();
    try {
      // Fresh heartbeats: only the pid tells them apart.
      const dead = await seedRun(store, { pid: done.pid });
      const live = await seedRun(store, { pid: alive.pid });
      const sibling = await seedRun(store, { pid: Deno.pid });
      await using peer = await startPeer(store);
      assert.equal(await status(store, dead), "interrupted");
      const run = await new Repository(scoped(store, ["agents"])).getRun(dead);
      assert.equal(run.stop_reason, "interrupted");
      assert.ok(run.finished_at);
      assert.match(run.error?.message ?? "", /stopped while this run/);
      assert.equal(await activeRun(store, dead), undefined);
      assert.equal(await status(store, live), "running");
      assert.equal(
        await status(store, sibling),
        "running",
        "another service in this very process",
      );
      assert.deepEqual(peer.interrupted(), [{ process_gone: 1 }]);
    } finally {
      alive.kill("SIGKILL");
      await alive.status;
      await store.close();
    }
  },
});

Deno.test("run lease: another host's fresh lease is left alone; once stale, the periodic sweep interrupts it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agentd-lease-" });
  // Two connections to one file: the peer's and ours.
  const theirs = await openKvStore(`${dir}/agentd.kv`);
  const ours = await openKvStore(`${dir}/agentd.kv`);
  try {
    let now = Date.now();
    const elsewhere = { host: "peer.invalid", pid: 4242 };
    const fresh = await seedRun(theirs, {
      ...elsewhere,
      heartbeat_at: new Date(now).toISOString(),
    });
    await using peer = await startPeer(ours, {
      leaseRenewMs: 30,
      clock: () => now,
    });
    assert.equal(await status(ours, fresh), "running");

    // Seeded after start: only a sweep can find it.
    const old = await seedRun(theirs, {
      ...elsewhere,
      heartbeat_at: new Date(now - 60_000).toISOString(),
    });
    await waitFor(() => status(ours, old), (value) => value === "interrupted");
    assert.equal(await status(ours, fresh), "running", "still fresh");
    // The sweep logs right after its commit, which the test may read first.
    await waitFor(() => peer.interrupted(), (lines) => lines.length > 0);
    assert.deepEqual(peer.interrupted(), [{ stale: 1 }]);

    now += 91; // past 3 × 30 ms without a renewal
    await waitFor(
      () => status(ours, fresh),
      (value) => value === "interrupted",
    );
    assert.equal(await activeRun(ours, fresh), undefined);
    await waitFor(() => peer.interrupted(), (lines) => lines.length > 1);
    assert.deepEqual(peer.interrupted(), [{ stale: 1 }, { stale: 1 }]);
  } finally {
    await theirs.close();
    await ours.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("run lease: a legacy `true` or a malformed active_run value is interrupted at start; finished runs' leftovers are dropped", async () => {
  const store = new MemoryStore();
  try {
    const legacy = await seedRun(store, true);
    const malformed = await seedRun(store, "not a lease");
    const badTime = await seedRun(store, { heartbeat_at: "yesterday" });
    const finished = await seedRun(store, true);
    const agents = scoped(store, ["agents"]);
    const repository = new Repository(agents);
    await repository.saveRun({
      ...await repository.getRun(finished),
      status: "completed",
    });
    await agents.set(["active_run", finished], true); // left behind

    await using peer = await startPeer(store);
    assert.equal(await status(store, legacy), "interrupted");
    assert.equal(await status(store, malformed), "interrupted");
    assert.equal(await status(store, badTime), "interrupted");
    assert.equal(await status(store, finished), "completed");
    assert.equal(await activeRun(store, finished), undefined);
    assert.deepEqual(peer.interrupted(), [{ legacy: 1, malformed: 2 }]);
    const line = peer.logs.find((l) => l.event === "runs_interrupted");
    assert.equal(line?.count, 3);
  } finally {
    await store.close();
  }
});
