// Issue 36 (the gateway's agents__send and teams__execute), as an attacker
// holding one agent's identity: through the tools it may do exactly what
// its /v1 token may, and no more. Sending as another agent, or running a
// team with a member it may not act as, is refused in /v1's words with no
// model asked: called plainly, as a task, through the on-demand call_tool,
// and with the target spelled any way (case, spaces, invisible characters,
// its id, another normalization); and a deny rule on `agents.send` or
// `teams.execute` holds by each of those ways. The in-process daemon stack
// (tests/agents/stack.ts) with the scripted model server.

import assert from "node:assert/strict";
import {
  CallToolResultSchema,
  type Client,
  CreateTaskResultSchema,
} from "../../platform/mcp_sdk.ts";
import { Agent, SendReply } from "../../agents/schemas.ts";
import { ALICE_TOKEN, type Stack, startStack } from "../agents/stack.ts";
import { call, textOf } from "../tools/gateway/upstreams.ts";

async function crew(stack: Stack): Promise<{ bob: Agent }> {
  let bob: Agent | undefined;
  for (const name of ["alice", "bob", "zoë"]) {
    const created = await stack.request("POST", "/v1/agents", {
      name,
      system_prompt: `You are ${name}.`,
    });
    assert.equal(created.status, 201, created.text);
    if (name === "bob") bob = Agent.parse(created.json);
  }
  for (
    const [name, agents] of [
      ["crew", ["alice", "bob"]],
      ["bobs", ["bob"]],
      ["own", ["alice"]],
    ] as const
  ) {
    const team = await stack.request("POST", "/v1/teams", { name, agents });
    assert.equal(team.status, 201, team.text);
  }
  assert.ok(bob);
  return { bob };
}

/** A tools/call as a task, to its end: the result tasks/result answers. */
async function asTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
) {
  const created = await client.request(
    {
      method: "tools/call",
      params: { name, arguments: args, task: { ttl: 120_000 } },
    },
    CreateTaskResultSchema,
  );
  return await client.experimental.tasks.getTaskResult(
    created.task.taskId,
    CallToolResultSchema,
  );
}

Deno.test("security agent tools: an agent's identity may do through agents__send and teams__execute what its /v1 token may, and no more", async () => {
  await using stack = await startStack({ agents: { act_as: {} } });
  const { bob } = await crew(stack);
  const alice = await stack.gateway("alice");
  const asAlice = { authorization: `Bearer ${ALICE_TOKEN}` };
  const before = stack.model.requests.length;

  // Sending as another agent: refused by /v1 and by the tool, in the same words.
  const v1Send = await stack.request(
    "POST",
    "/v1/agents/bob/send",
    { message: "hi" },
    asAlice,
  );
  assert.equal(v1Send.status, 403, v1Send.text);
  const refusedSend = Reflect.get(Object(v1Send.json).error, "message");
  const toolSend = await call(alice, "agents__send", {
    agent: "bob",
    message: "hi",
  });
  assert.equal(toolSend.isError, true);
  assert.equal(textOf(toolSend), refusedSend);

  // A team with a member she may not act as: the same.
  for (const team of ["crew", "bobs"]) {
    const v1Run = await stack.request(
      "POST",
      `/v1/teams/${team}/execute`,
      { task: "t" },
      asAlice,
    );
    assert.equal(v1Run.status, 403, v1Run.text);
    const toolRun = await call(alice, "teams__execute", { team, task: "t" });
    assert.equal(toolRun.isError, true);
    assert.equal(
      textOf(toolRun),
      Reflect.get(Object(v1Run.json).error, "message"),
    );
  }

  // Through the on-demand meta-tool: the same.
  const meta = await call(alice, "call_tool", {
    name: "agents__send",
    arguments: { agent: "bob", message: "hi" },
  });
  assert.equal(meta.isError, true);
  assert.equal(textOf(meta), refusedSend);

  // As a task: the same refusal is the task's result.
  const sentAsTask = await asTask(alice, "agents__send", {
    agent: "bob",
    message: "hi",
  });
  assert.equal(sentAsTask.isError, true);
  assert.match(textOf(sentAsTask), /cannot act as "bob"/);
  const ranAsTask = await asTask(alice, "teams__execute", {
    team: "crew",
    task: "t",
  });
  assert.equal(ranAsTask.isError, true);
  assert.match(textOf(ranAsTask), /cannot act as "bob"/);

  // Bob spelled any way: refused, or no such agent; never bob's turn.
  for (
    const agent of [
      bob.id,
      "Bob",
      "BOB",
      " bob",
      "bob ",
      "bob\u200b",
      "b\u043eb", // a Cyrillic o
      "zoe\u0308", // zoë in NFD
      "zoë",
      "bob/../alice",
      "x".repeat(200),
    ]
  ) {
    const sent = await call(alice, "agents__send", { agent, message: "hi" });
    assert.equal(sent.isError, true, `${agent}: ${textOf(sent)}`);
    assert.match(
      textOf(sent),
      /cannot act as|not found|Unknown|Invalid/i,
      agent,
    );
  }
  for (const team of ["CREW", "crew ", "Bobs", "bobs\u200b"]) {
    const ran = await call(alice, "teams__execute", { team, task: "t" });
    assert.equal(ran.isError, true, `${team}: ${textOf(ran)}`);
  }
  assert.equal(stack.model.requests.length, before, "no model was asked");

  // As herself, and her own team, she may, as at /v1 (so the refusals above were about bob).
  stack.model.script([{ text: "Noted." }]);
  const own = await call(alice, "agents__send", {
    agent: "alice",
    message: "hi",
  });
  assert.notEqual(own.isError, true, textOf(own));
  const reply = SendReply.parse(own.structuredContent);
  assert.equal(reply.agent_name, "alice");
  assert.equal(reply.content, "Noted.");
  stack.model.script([{ text: "Done alone." }]);
  const ownTeam = await call(alice, "teams__execute", {
    team: "own",
    task: "t",
  });
  assert.notEqual(ownTeam.isError, true, textOf(ownTeam));
});

Deno.test("security agent tools: agents.act_as widens exactly what it names", async () => {
  await using stack = await startStack({
    agents: { act_as: { alice: ["bob"] } },
  });
  await crew(stack);
  const alice = await stack.gateway("alice");
  const before = stack.model.requests.length;
  // bob is allowed; zoë is not, alone or in a team.
  const zoe = await call(alice, "agents__send", {
    agent: "zoë",
    message: "hi",
  });
  assert.equal(zoe.isError, true);
  assert.match(textOf(zoe), /cannot act as "zoë"/);
  assert.equal(stack.model.requests.length, before, "no model was asked");
  stack.model.script([{ text: "Bob here." }]);
  const sent = await call(alice, "agents__send", {
    agent: "bob",
    message: "hi",
  });
  assert.notEqual(sent.isError, true, textOf(sent));
  assert.equal(SendReply.parse(sent.structuredContent).agent_name, "bob");
});

Deno.test("security agent tools: a deny rule on agents.send / teams.execute holds by every way in, as a task too", async () => {
  await using stack = await startStack();
  await crew(stack);
  const policy = await stack.request("PUT", "/admin/policy", {
    rules: [
      {
        id: "alice-no-send",
        agent: "alice",
        server: "agents",
        tool: "send",
        decision: "deny",
      },
      {
        id: "alice-no-teams",
        agent: "alice",
        server: "teams",
        decision: "deny",
      },
    ],
  });
  assert.equal(policy.status, 200, policy.text);
  const alice = await stack.gateway("alice");
  const before = stack.model.requests.length;
  const send = { agent: "alice", message: "hi" };
  const execute = { team: "own", task: "t" };
  for (
    const answer of [
      await call(alice, "agents__send", send),
      await call(alice, "call_tool", { name: "agents__send", arguments: send }),
      await asTask(alice, "agents__send", send),
      await call(alice, "teams__execute", execute),
      await call(alice, "call_tool", {
        name: "teams__execute",
        arguments: execute,
      }),
      await asTask(alice, "teams__execute", execute),
    ]
  ) {
    assert.equal(answer.isError, true, textOf(answer));
    assert.match(textOf(answer), /alice-no-(send|teams)/);
  }
  assert.equal(stack.model.requests.length, before, "no model was asked");
  // The rule names alice only: the operator still sends (so the rule was what refused).
  stack.model.script([{ text: "Noted." }]);
  const operator = await stack.gateway();
  const sent = await call(operator, "agents__send", send);
  assert.notEqual(sent.isError, true, textOf(sent));
});
