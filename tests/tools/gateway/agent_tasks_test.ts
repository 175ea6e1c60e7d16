// A team run as an MCP task through a real `agentd serve`: an SDK client
// calls teams__execute at /mcp with params.task, gets the handle at once,
// polls tasks/get to `completed`, and tasks/result answers the run /v1
// answers for the same team and task (the scripted model server stands in
// for the paid API).

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
} from "../../../platform/mcp_sdk.ts";
import { Run } from "../../../agents/schemas.ts";
import { api, spawnServe, tempDir, waitFor } from "../../helpers.ts";
import {
  type ModelServer,
  startModelServer,
} from "../../agents/model_server.ts";
import { adminView, gatewayClient } from "./upstreams.ts";

/** A run without what differs between two runs of the same task (ids, times). */
function comparable(run: Run) {
  const { id: _id, created_at: _c, finished_at: _f, ...rest } = run;
  return rest;
}

/** The daemon's gateway and memory, the scripted model, and team "crew" of two agents. */
async function crewDaemon(dataDir: string, model: ModelServer) {
  const daemon = await spawnServe(dataDir, {
    env: {
      ...model.env,
      AGENTD_SERVERS: "gateway,memory",
      AGENTD_AGENTS__DEFAULT_MODEL: "openai/test-model",
    },
  });
  try {
    for (const name of ["researcher", "writer"]) {
      const created = await api(daemon, "POST", "/v1/agents", {
        name,
        system_prompt: `You are ${name}.`,
      });
      assert.equal(created.status, 201, created.text);
    }
    const team = await api(daemon, "POST", "/v1/teams", {
      name: "crew",
      agents: ["researcher", "writer"],
    });
    assert.equal(team.status, 201, team.text);
  } catch (error) {
    await daemon.stop();
    throw error;
  }
  return daemon;
}

Deno.test("a team run as a task: the handle at once, polled to completed, the result the /v1 run", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await crewDaemon(join(dir.path, "data"), model);
  try {
    const task = { task: "One sentence about cats.", context: { tone: "dry" } };
    // The first turn's answer is held back: the run is still working when
    // the task's handle has been answered.
    const script = (delay_ms: number) => [
      { text: "FACTS: cats sleep a lot.", delay_ms },
      { text: "FINAL: Cats sleep most of the day." },
    ];

    model.script(script(0));
    const viaV1 = await api(daemon, "POST", "/v1/teams/crew/execute", task);
    assert.equal(viaV1.status, 200, viaV1.text);
    const v1Run = Run.parse(viaV1.json);
    assert.equal(v1Run.status, "completed");

    await using client = await gatewayClient(daemon.url);
    const listed = (await client.listTools()).tools.find((tool) =>
      tool.name === "teams__execute"
    );
    assert.equal(listed?.execution?.taskSupport, "optional");
    // /admin's catalog shows them with the server their origin names.
    const admin = await adminView(daemon.url);
    assert.deepEqual(
      admin.tools.filter((row) =>
        row.group === "agents" || row.group === "teams"
      )
        .map((row) => [row.name, row.group, row.tool]),
      [["agents__send", "agents", "send"], [
        "teams__execute",
        "teams",
        "execute",
      ]],
    );
    model.script(script(1500));
    const created = await client.request(
      {
        method: "tools/call",
        params: {
          name: "teams__execute",
          arguments: { team: "crew", ...task },
          task: { ttl: 120_000 },
        },
      },
      CreateTaskResultSchema,
    );
    const id = created.task.taskId;
    assert.equal(created.task.status, "working");
    assert.equal(
      (await client.experimental.tasks.getTask(id)).status,
      "working",
      "the run goes on after the handle came back",
    );
    const done = await waitFor(
      () => client.experimental.tasks.getTask(id),
      (got) => got.status !== "working",
      30_000,
    );
    assert.equal(done.status, "completed", JSON.stringify(done));
    const result = await client.experimental.tasks.getTaskResult(
      id,
      CallToolResultSchema,
    );
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    const taskRun = Run.parse(result.structuredContent);
    assert.notEqual(taskRun.id, v1Run.id);
    assert.deepEqual(comparable(taskRun), comparable(v1Run));
    // Stored as any run: /v1 reads back exactly what the task answered.
    const stored = await api(daemon, "GET", `/v1/runs/${taskRun.id}`);
    assert.deepEqual(stored.json, taskRun);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});

Deno.test("a team run as a task: tasks/cancel stops the run (its waiting turn too), as POST /v1/runs/{id}/cancel", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await crewDaemon(join(dir.path, "data"), model);
  try {
    // The first turn waits for the model far longer than the test.
    model.script([{ text: "late", delay_ms: 60_000 }]);
    await using client = await gatewayClient(daemon.url);
    const created = await client.request(
      {
        method: "tools/call",
        params: {
          name: "teams__execute",
          arguments: { team: "crew", task: "Take your time." },
          task: { ttl: 120_000 },
        },
      },
      CreateTaskResultSchema,
    );
    const id = created.task.taskId;
    // The run is stored and its first turn is with the model.
    const running = await waitFor(
      async () => (await api(daemon, "GET", "/v1/runs")).json,
      () => model.requests.length === 1,
    );
    const listed = Run.array().parse(
      (running as { data: unknown }).data,
    );
    assert.equal(listed.length, 1);
    assert.equal(listed[0].status, "running");

    const cancelled = await client.experimental.tasks.cancelTask(id);
    assert.equal(cancelled.status, "cancelled");
    const ended = await waitFor(
      async () =>
        Run.parse((await api(daemon, "GET", `/v1/runs/${listed[0].id}`)).json),
      (run) => run.status !== "running",
    );
    assert.equal(ended.status, "cancelled");
    assert.equal(ended.stop_reason, "cancelled");
    assert.match(ended.error?.message ?? "", /tasks\/cancel/);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});
