// A2A between two real `agentd serve` processes, each with real agents that
// think through its own scripted model server: seed envelopes between local
// agents, across daemons (request and notification), a remote agent's card,
// @a2a-js/sdk's client (v1.0 and 0.3) against a real agent, and a restart
// that keeps agents, inboxes and tasks.

import assert from "node:assert/strict";
import { CancelTaskRequest, GetTaskRequest, TaskState } from "@a2a-js/sdk";
import { z } from "zod";
import { Agent } from "../../agents/schemas.ts";
import {
  api,
  type Daemon,
  freePort,
  spawnServe,
  tempDir,
  waitFor,
} from "../helpers.ts";
import {
  artifactText,
  asTask,
  sendRequest,
  v03Client,
  v1Client,
} from "./a2a/fixture.ts";
import { type ModelServer, startModelServer } from "./model_server.ts";

/** A stored seed envelope, as POST /v1/a2a/message and the inboxes show it. */
const EnvelopeRecord = z.object({
  id: z.string(),
  version: z.string(),
  type: z.enum(["request", "response", "notification", "error"]),
  from_agent: z.string(),
  to_agent: z.string(),
  content: z.string(),
  priority: z.enum(["low", "normal", "high"]),
  in_reply_to: z.string().nullable(),
  status: z.string(),
  error: z.string().nullable(),
  reply_id: z.string().nullable(),
  task_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
type EnvelopeRecord = z.infer<typeof EnvelopeRecord>;

const Accepted = z.object({ id: z.string(), status: z.literal("accepted") });

const SeedCard = z.looseObject({
  name: z.string(),
  description: z.string(),
  version: z.string(),
  protocols: z.array(z.string()),
  capabilities: z.array(z.string()),
  endpoints: z.object({ a2a: z.string() }),
  supportedInterfaces: z.array(
    z.object({
      url: z.string(),
      protocolBinding: z.string(),
      protocolVersion: z.string(),
    }),
  ),
});

/** Posts a request envelope; the reply is the response envelope. */
async function ask(
  daemon: Daemon,
  envelope: Record<string, string>,
): Promise<EnvelopeRecord> {
  const res = await api(daemon, "POST", "/v1/a2a/message", {
    version: "1.0.0",
    type: "request",
    ...envelope,
  });
  assert.equal(res.status, 200, res.text);
  return EnvelopeRecord.parse(res.json);
}

/** Posts a notification envelope; the reply only accepts it. */
async function notify(
  daemon: Daemon,
  envelope: Record<string, string>,
): Promise<{ id: string }> {
  const res = await api(daemon, "POST", "/v1/a2a/message", {
    version: "1.0.0",
    type: "notification",
    ...envelope,
  });
  assert.equal(res.status, 202, res.text);
  return Accepted.parse(res.json);
}

/** An agent's inbox, newest first. */
async function inbox(daemon: Daemon, agent: string): Promise<EnvelopeRecord[]> {
  const reply = await api(daemon, "GET", `/v1/a2a/${agent}/messages`);
  assert.equal(reply.status, 200, reply.text);
  return z.object({ data: z.array(EnvelopeRecord) }).parse(reply.json).data;
}

async function createAgent(
  daemon: Daemon,
  body: Record<string, string>,
): Promise<Agent> {
  const created = await api(daemon, "POST", "/v1/agents", body);
  assert.equal(created.status, 201, created.text);
  return Agent.parse(created.json);
}

/** What the model was asked last: the user message of its latest call. */
function lastUserMessage(model: ModelServer): string {
  const messages = model.requests.at(-1)?.body.messages;
  const list = z.array(z.object({ role: z.string(), content: z.unknown() }))
    .parse(messages);
  const user = list.filter((m) => m.role === "user").at(-1);
  return typeof user?.content === "string"
    ? user.content
    : JSON.stringify(user?.content);
}

function serve(
  dataDir: string,
  model: ModelServer,
  port?: number,
): Promise<Daemon> {
  return spawnServe(dataDir, {
    env: { ...model.env, AGENTD_SERVERS: "gateway,memory" },
    extra: port === undefined ? [] : ["--port", String(port)],
  });
}

async function stopCleanly(daemon: Daemon | undefined): Promise<void> {
  if (!daemon) return;
  const status = await daemon.stop();
  assert.equal(status.code, 0, `${daemon.url} exited ${status.code}`);
  assert.deepEqual(daemon.stray, [], `${daemon.url} wrote non-JSON lines`);
  const errors = daemon.logs.filter((line) => line.level === "error");
  assert.deepEqual(errors, [], `${daemon.url} logged errors`);
}

const CLIENTS = [["1.0", v1Client], ["0.3", v03Client]] as const;

Deno.test("a2a daemons: real agents on two agentd processes talk over /v1/a2a and A2A, and keep it all across a restart", async (t) => {
  await using dirA = await tempDir();
  await using dirB = await tempDir();
  await using modelA = await startModelServer();
  await using modelB = await startModelServer();
  // B gets a fixed port so that carol's address stays the same across its restart.
  const portB = freePort();
  let a: Daemon | undefined;
  let b: Daemon | undefined;
  let stops: PromiseSettledResult<void>[] = [];
  try {
    [a, b] = await Promise.all([
      serve(dirA.path, modelA),
      serve(dirB.path, modelB, portB),
    ]);
    const A = a;
    const B = b;
    await createAgent(A, { name: "alice", model: "openai/test-model" });
    await createAgent(A, {
      name: "bob",
      model: "openai/test-model",
      system_prompt: "You are Bob, the build watcher.",
    });
    const carol = await createAgent(B, {
      name: "carol",
      model: "anthropic/claude-test",
      system_prompt: "You are Carol, keeper of the release calendar.",
    });
    const carolAddress = `${B.url}/v1/a2a/carol`;
    const taskIds: { completed: string[]; canceled: string[] } = {
      completed: [],
      canceled: [],
    };

    await t.step("envelopes between two agents of one daemon", async () => {
      modelA.script([{ text: "Bob here: the build is green." }]);
      const answer = await ask(A, {
        from_agent: "alice",
        to_agent: "bob",
        content: "Is the build green?",
        priority: "high",
      });
      assert.deepEqual(
        [answer.type, answer.from_agent, answer.to_agent, answer.content],
        ["response", "bob", "alice", "Bob here: the build is green."],
      );
      assert.equal(answer.priority, "high");
      assert.equal(answer.version, "1.0.0");
      // Bob's turn ran on A's model, told who asked and what.
      assert.equal(modelA.requests.length, 1);
      assert.equal(modelB.requests.length, 0);
      assert.match(
        lastUserMessage(modelA),
        /message from agent "alice"[\s\S]*Is the build green\?/,
      );
      assert.match(
        JSON.stringify(modelA.requests[0].body.messages),
        /You are Bob, the build watcher/,
      );
      // The request is in bob's inbox (answered, linked to the response), the response in alice's.
      const [request] = await inbox(A, "bob");
      assert.equal(request.id, answer.in_reply_to);
      assert.deepEqual(
        [request.type, request.status, request.reply_id, request.content],
        ["request", "answered", answer.id, "Is the build green?"],
      );
      const [reply] = await inbox(A, "alice");
      assert.equal(reply.id, answer.id);

      const accepted = await notify(A, {
        from_agent: "alice",
        to_agent: "bob",
        content: "Deploy window opens at 15:00.",
      });
      assert.equal(modelA.requests.length, 1, "a notification runs no turn");
      const [latest, older] = await inbox(A, "bob");
      assert.equal(latest.id, accepted.id);
      assert.deepEqual(
        [latest.type, latest.from_agent, latest.content, latest.priority],
        ["notification", "alice", "Deploy window opens at 15:00.", "normal"],
      );
      assert.equal(latest.status, "accepted");
      assert.equal(older.id, request.id);
    });

    await t.step("envelopes from A's alice to carol on daemon B", async () => {
      modelB.script([{ text: "Carol: the release is on Thursday." }]);
      const answer = await ask(A, {
        from_agent: "alice",
        to_agent: carolAddress,
        content: "When is the release?",
        priority: "high",
      });
      assert.deepEqual(
        [answer.type, answer.from_agent, answer.to_agent, answer.content],
        ["response", "carol", "alice", "Carol: the release is on Thursday."],
      );
      assert.equal(answer.priority, "high");
      // Carol's turn ran on B (B's model server, the Anthropic wire format), none on A.
      assert.equal(modelA.requests.length, 1);
      assert.equal(modelB.requests.length, 1);
      assert.equal(modelB.requests[0].api, "anthropic");
      assert.equal(modelB.requests[0].body.model, "claude-test");
      assert.match(
        lastUserMessage(modelB),
        /message from agent "alice"[\s\S]*When is the release\?/,
      );
      assert.match(
        JSON.stringify(modelB.requests[0].body.system),
        /keeper of the release calendar/,
      );
      // A: the response in alice's inbox, carrying B's task.
      const [reply] = await inbox(A, "alice");
      assert.equal(reply.id, answer.id);
      assert.ok(answer.task_id, "the response names B's task");
      taskIds.completed.push(answer.task_id);
      // B: the request in carol's inbox, answered by that task.
      const [received] = await inbox(B, "carol");
      assert.deepEqual(
        [received.type, received.from_agent, received.to_agent],
        ["request", "alice", "carol"],
      );
      assert.deepEqual(
        [received.content, received.priority, received.status],
        ["When is the release?", "high", "answered"],
      );
      assert.equal(received.task_id, answer.task_id);

      await notify(A, {
        from_agent: "alice",
        to_agent: carolAddress,
        content: "Release notes are drafted.",
        priority: "low",
      });
      assert.equal(modelB.requests.length, 1, "a notification runs no turn");
      const [latest] = await inbox(B, "carol");
      assert.deepEqual(
        [latest.type, latest.from_agent, latest.content, latest.priority],
        ["notification", "alice", "Release notes are drafted.", "low"],
      );
      assert.equal(latest.status, "accepted");

      // A second request continues the same conversation on B.
      modelB.script([{ text: "Carol: still Thursday." }]);
      const second = await ask(A, {
        from_agent: "alice",
        to_agent: carolAddress,
        content: "Still on?",
        priority: "normal",
      });
      assert.ok(second.task_id);
      taskIds.completed.push(second.task_id);
      assert.equal(modelB.requests.length, 2);
      const history = JSON.stringify(modelB.requests[1].body.messages);
      assert.match(history, /When is the release\?/);
      assert.match(history, /the release is on Thursday/);
    });

    await t.step("A shows B's carol card with B's address", async () => {
      const res = await api(
        A,
        "GET",
        `/v1/a2a/${encodeURIComponent(carolAddress)}/card`,
      );
      assert.equal(res.status, 200, res.text);
      const card = SeedCard.parse(res.json);
      assert.equal(card.name, "carol");
      assert.equal(
        card.description,
        "You are Carol, keeper of the release calendar.",
      );
      assert.deepEqual(card.protocols, ["a2a"]);
      assert.deepEqual(card.endpoints, { a2a: carolAddress });
      assert.match(card.version, /^\d+\.\d+\.\d+$/);
      assert.ok(card.capabilities.includes("streaming"));
      assert.ok(card.capabilities.includes("conversation"));
      assert.deepEqual(
        card.supportedInterfaces.map((i) => [i.url, i.protocolVersion]),
        [[carolAddress, "1.0"], [carolAddress, "0.3"]],
      );
      // The same card B shows for its own agent.
      const local = await api(B, "GET", "/v1/a2a/carol/card");
      assert.deepEqual(res.json, local.json);
      // An address nothing answers at is a 502 naming it.
      const gone = `http://127.0.0.1:${freePort()}/v1/a2a/nobody`;
      const missing = await api(
        A,
        "GET",
        `/v1/a2a/${encodeURIComponent(gone)}/card`,
      );
      assert.equal(missing.status, 502, missing.text);
      assert.match(missing.text, /no agent card found/);
    });

    for (const [version, makeClient] of CLIENTS) {
      await t.step(
        `@a2a-js/sdk ${version} client against B's carol`,
        async () => {
          const client = await makeClient(B, "carol");
          assert.equal(client.protocolVersion, version);

          modelB.script([{ text: `Thursday at noon (${version}).` }]);
          const task = asTask(
            await client.sendMessage(sendRequest("When exactly?")),
          );
          assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
          assert.equal(artifactText(task), `Thursday at noon (${version}).`);
          assert.match(lastUserMessage(modelB), /When exactly\?/);
          taskIds.completed.push(task.id);

          const got = await client.getTask(
            GetTaskRequest.fromJSON({ id: task.id }),
          );
          assert.equal(got.id, task.id);
          assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
          assert.equal(artifactText(got), `Thursday at noon (${version}).`);

          const streamedText =
            "The freeze starts Wednesday, the release follows.";
          modelB.script([{ text: streamedText, chunk_delay_ms: 10 }]);
          let text = "";
          let chunks = 0;
          let last: TaskState | undefined;
          let streamedTask = "";
          for await (
            const event of client.sendMessageStream(
              sendRequest("And the freeze?"),
            )
          ) {
            const payload = event.payload;
            if (payload?.$case === "task") streamedTask = payload.value.id;
            if (payload?.$case === "artifactUpdate") {
              for (const part of payload.value.artifact?.parts ?? []) {
                if (part.content?.$case === "text") {
                  text += part.content.value;
                  chunks++;
                }
              }
            }
            if (payload?.$case === "statusUpdate") {
              last = payload.value.status?.state;
            }
          }
          assert.equal(text, streamedText);
          assert.ok(chunks > 1, `the text came in ${chunks} chunk(s)`);
          assert.equal(last, TaskState.TASK_STATE_COMPLETED);
          assert.ok(streamedTask);
          taskIds.completed.push(streamedTask);

          modelB.script([{ text: "never said", delay_ms: 60_000 }]);
          const calls = modelB.requests.length;
          const slow = asTask(
            await client.sendMessage(
              sendRequest("Take your time.", { returnImmediately: true }),
            ),
          );
          assert.ok(
            slow.status?.state === TaskState.TASK_STATE_SUBMITTED ||
              slow.status?.state === TaskState.TASK_STATE_WORKING,
            `state ${slow.status?.state}`,
          );
          // Carol's turn is waiting on the model.
          await waitFor(() => modelB.requests.length, (n) => n === calls + 1);
          const canceled = await client.cancelTask(
            CancelTaskRequest.fromJSON({ id: slow.id }),
          );
          assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
          const after = await client.getTask(
            GetTaskRequest.fromJSON({ id: slow.id }),
          );
          assert.equal(after.status?.state, TaskState.TASK_STATE_CANCELED);
          assert.equal(artifactText(after), "");
          taskIds.canceled.push(slow.id);
        },
      );
    }

    await t.step(
      "B restarted on its data dir keeps carol, her inbox and her tasks",
      async () => {
        const inboxBefore = await inbox(B, "carol");
        await stopCleanly(B);
        b = undefined;
        const B2 = await serve(dirB.path, modelB, portB);
        b = B2;
        const again = await api(B2, "GET", "/v1/agents/carol");
        assert.equal(again.status, 200, again.text);
        assert.deepEqual(Agent.parse(again.json), carol);
        assert.deepEqual(await inbox(B2, "carol"), inboxBefore);
        assert.deepEqual(
          inboxBefore.map((m) => [m.type, m.content]),
          [
            ["request", "Still on?"],
            ["notification", "Release notes are drafted."],
            ["request", "When is the release?"],
          ],
        );

        const client = await v1Client(B2, "carol");
        for (const id of taskIds.completed) {
          const task = await client.getTask(GetTaskRequest.fromJSON({ id }));
          assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED, id);
          assert.notEqual(artifactText(task), "");
        }
        for (const id of taskIds.canceled) {
          const task = await client.getTask(GetTaskRequest.fromJSON({ id }));
          assert.equal(task.status?.state, TaskState.TASK_STATE_CANCELED, id);
        }
        assert.equal(taskIds.completed.length, 6);
        assert.equal(taskIds.canceled.length, 2);

        // A still reaches carol at the same address.
        modelB.script([{ text: "Carol is back." }]);
        const back = await ask(A, {
          from_agent: "alice",
          to_agent: carolAddress,
          content: "Still there?",
        });
        assert.equal(back.content, "Carol is back.");
        assert.equal((await inbox(B2, "carol")).length, 4);
      },
    );
  } finally {
    stops = await Promise.allSettled([stopCleanly(a), stopCleanly(b)]);
  }
  for (const stopped of stops) {
    if (stopped.status === "rejected") throw stopped.reason;
  }
});
