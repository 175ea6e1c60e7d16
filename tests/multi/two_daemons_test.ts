// Two `agentd serve` processes on one PostgreSQL store: whatever one daemon
// writes (agents, teams, runs, A2A tasks, gateway registrations), the other
// reads, changes and serves; a daemon killed -9 mid-run leaves its run to the
// other, which marks it interrupted; nothing runs twice.

import assert from "node:assert/strict";
import { CancelTaskRequest, GetTaskRequest, TaskState } from "@a2a-js/sdk";
import { z } from "zod";
import { Agent, Run, Team } from "../../agents/schemas.ts";
import { api, type Daemon, waitFor } from "../helpers.ts";
import { pgTestIgnore } from "../pg_server.ts";
import {
  asTask,
  post,
  sendRequest,
  sseEvents,
  v1Client,
} from "../agents/a2a/fixture.ts";
import {
  call,
  callJson,
  gatewayClient,
  startRecordingServer,
  textOf,
} from "../tools/gateway/upstreams.ts";
import { assertPasswordHidden, startCluster } from "./cluster.ts";

const ignore = pgTestIgnore();
const Page = <T extends z.ZodType>(item: T) =>
  z.object({ data: z.array(item) });

async function createAgent(daemon: Daemon, name: string): Promise<Agent> {
  const created = await api(daemon, "POST", "/v1/agents", {
    name,
    model: "openai/test-model",
    system_prompt: `You are ${name}.`,
  });
  assert.equal(created.status, 201, created.text);
  return Agent.parse(created.json);
}

async function runsOf(daemon: Daemon, teamId: string): Promise<Run[]> {
  const reply = await api(daemon, "GET", `/v1/runs?team_id=${teamId}`);
  assert.equal(reply.status, 200, reply.text);
  return Page(Run).parse(reply.json).data;
}

Deno.test({
  name:
    "multi: two daemons on one PostgreSQL share agents, teams, runs, A2A tasks and gateway registrations",
  ignore,
  async fn(t) {
    await using cluster = await startCluster(2);
    const [A, B] = cluster.daemons;
    const model = cluster.model;

    await t.step("the store is PostgreSQL and healthy on both", async () => {
      for (const daemon of [A, B]) {
        const health = await api(daemon, "GET", "/health");
        assert.equal(health.status, 200, health.text);
        assert.deepEqual(
          z.object({
            store: z.object({ kind: z.string(), status: z.string() }),
          })
            .parse(health.json).store,
          { kind: "postgres", status: "ok" },
        );
      }
    });

    await t.step(
      "an agent created on A is listed, sent to and deleted on B",
      async () => {
        await createAgent(A, "ada");
        const listed = await api(B, "GET", "/v1/agents");
        assert.equal(listed.status, 200, listed.text);
        assert.deepEqual(
          Page(Agent).parse(listed.json).data.map((a) => a.name),
          ["ada"],
        );
        model.script([{ text: "Ada answers from B." }]);
        const sent = await api(B, "POST", "/v1/agents/ada/send", {
          message: "Hello?",
        });
        assert.equal(sent.status, 200, sent.text);
        assert.match(sent.text, /Ada answers from B\./);
        // The conversation B wrote is A's too: A's next turn sees it.
        model.script([{ text: "Second turn on A." }]);
        const again = await api(A, "POST", "/v1/agents/ada/send", {
          message: "And again?",
        });
        assert.equal(again.status, 200, again.text);
        assert.match(
          JSON.stringify(model.requests.at(-1)?.body.messages),
          /Hello\?[\s\S]*Ada answers from B\.[\s\S]*And again\?/,
        );
        const deleted = await api(B, "DELETE", "/v1/agents/ada");
        assert.equal(deleted.status, 204, deleted.text);
        assert.equal((await api(A, "GET", "/v1/agents/ada")).status, 404);
        assert.equal((await api(B, "GET", "/v1/agents/ada")).status, 404);
      },
    );

    await t.step(
      "a team run started on B appears on A while it runs, and after",
      async () => {
        await createAgent(A, "scout");
        await createAgent(A, "scribe");
        const created = await api(A, "POST", "/v1/teams", {
          name: "pair",
          agents: ["scout", "scribe"],
        });
        assert.equal(created.status, 201, created.text);
        const team = Team.parse(created.json);
        const calls = model.requests.length;
        model.script([
          { text: "FOUND: it rains.", delay_ms: 1500 },
          { text: "WRITTEN: bring an umbrella." },
        ]);
        const execution = api(B, "POST", `/v1/teams/${team.id}/execute`, {
          task: "Weather?",
        });
        const running = await waitFor(
          () => runsOf(A, team.id),
          (runs) => runs.length === 1 && runs[0].status === "running",
        );
        const done = await execution;
        assert.equal(done.status, 200, done.text);
        const run = Run.parse(done.json);
        assert.equal(run.id, running[0].id);
        assert.equal(run.status, "completed");
        const seen = await api(A, "GET", `/v1/runs/${run.id}`);
        assert.equal(
          Run.parse(seen.json).output,
          "WRITTEN: bring an umbrella.",
        );
        assert.equal(model.requests.length, calls + 2);
      },
    );

    await t.step(
      "an A2A task created through A is fetched, canceled and streamed through B",
      async () => {
        await createAgent(A, "carol");
        const viaA = await v1Client(A, "carol");
        const viaB = await v1Client(B, "carol");
        const calls = model.requests.length;
        model.script([{ text: "never said", delay_ms: 60_000 }]);
        const slow = asTask(
          await viaA.sendMessage(
            sendRequest("Take your time.", { returnImmediately: true }),
          ),
        );
        await waitFor(() => model.requests.length, (n) => n === calls + 1);
        const fetched = await viaB.getTask(
          GetTaskRequest.fromJSON({ id: slow.id }),
        );
        assert.equal(fetched.id, slow.id);
        assert.ok(
          fetched.status?.state === TaskState.TASK_STATE_SUBMITTED ||
            fetched.status?.state === TaskState.TASK_STATE_WORKING,
          `state ${fetched.status?.state}`,
        );
        const canceled = await viaB.cancelTask(
          CancelTaskRequest.fromJSON({ id: slow.id }),
        );
        assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
        // A, whose process ran the turn, reports the cancel too.
        const onA = await viaA.getTask(
          GetTaskRequest.fromJSON({ id: slow.id }),
        );
        assert.equal(onA.status?.state, TaskState.TASK_STATE_CANCELED);

        // A task running on A, followed (SubscribeToTask) through B to its end.
        model.script([{ text: "Streamed across daemons.", delay_ms: 1000 }]);
        const asked = model.requests.length;
        const running = asTask(
          await viaA.sendMessage(
            sendRequest("Stream it.", { returnImmediately: true }),
          ),
        );
        await waitFor(() => model.requests.length, (n) => n === asked + 1);
        const res = await fetch(
          `${B.url}/v1/a2a/carol`,
          post({
            jsonrpc: "2.0",
            id: "follow",
            method: "SubscribeToTask",
            params: { id: running.id },
          }),
        );
        assert.equal(res.status, 200);
        const events = z.array(
          z.object({ result: z.record(z.string(), z.unknown()) }),
        ).parse(await sseEvents(res));
        assert.deepEqual(events.map((e) => Object.keys(e.result)[0]), [
          "task",
          "artifactUpdate",
          "statusUpdate",
        ]);
        assert.match(
          JSON.stringify(events[1].result),
          /Streamed across daemons\./,
        );
        assert.match(JSON.stringify(events[2].result), /TASK_STATE_COMPLETED/);
      },
    );

    await t.step(
      "a server registered on A's gateway is routable from B",
      async () => {
        await using recorder = startRecordingServer();
        await using clientA = await gatewayClient(A.url);
        await using clientB = await gatewayClient(B.url);
        await callJson(clientA, "register_server", {
          name: "rec",
          url: recorder.url,
        });
        const result = await call(clientB, "rec__whoami");
        assert.notEqual(result.isError, true, textOf(result));
        assert.equal(textOf(result), "none");
        assert.equal(recorder.seen.length, 1);
        await callJson(clientB, "unregister_server", { name: "rec" });
        // Removed through B: A no longer knows the tool on its next request.
        await assert.rejects(
          call(clientA, "rec__whoami"),
          /Unknown tool "rec__whoami"/,
        );
      },
    );

    assertPasswordHidden(cluster);
  },
});
