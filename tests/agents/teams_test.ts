// Teams over real providers and the scripted model server: what each agent
// is given, how each strategy ends, and the run records they leave.

import assert from "node:assert/strict";
import { Run, Team } from "../../agents/schemas.ts";
import { type Stack, startStack } from "./stack.ts";

async function team(
  stack: Stack,
  agents: string[],
  fields: Record<string, unknown> = {},
): Promise<Team> {
  for (const name of agents) {
    if ((await stack.request("GET", `/v1/agents/${name}`)).status === 404) {
      const created = await stack.request("POST", "/v1/agents", {
        name,
        system_prompt: `You are ${name}.`,
        description: `the ${name}`,
      });
      assert.equal(created.status, 201, created.text);
    }
  }
  const reply = await stack.request("POST", "/v1/teams", {
    name: `team-${crypto.randomUUID().slice(0, 8)}`,
    agents,
    ...fields,
  });
  assert.equal(reply.status, 201, reply.text);
  return Team.parse(reply.json);
}

async function execute(
  stack: Stack,
  id: string,
  body: Record<string, unknown>,
): Promise<Run> {
  const reply = await stack.request("POST", `/v1/teams/${id}/execute`, body);
  assert.equal(reply.status, 200, reply.text);
  return Run.parse(reply.json);
}

const request = (stack: Stack, i: number) =>
  JSON.stringify(stack.model.requests[i].body);

Deno.test("sequential: three agents in order, each given the task, the context and the previous output", async () => {
  await using stack = await startStack();
  const crew = await team(stack, ["researcher", "writer", "editor"]);
  assert.equal(crew.strategy, "sequential");
  assert.equal(crew.max_iterations, 3);
  stack.model.script([
    { text: "FACTS: cats sleep 16 hours a day." },
    { text: "DRAFT: Cats nap most of the day." },
    { text: "FINAL: Cats nap for two thirds of every day." },
  ]);
  const run = await execute(stack, crew.id, {
    task: "Write one sentence about cats.",
    context: { audience: "children" },
  });
  assert.equal(run.status, "completed");
  assert.equal(run.stop_reason, "completed");
  assert.equal(run.team_id, crew.id);
  assert.equal(run.iterations, 3);
  assert.deepEqual(run.steps.map((s) => s.agent), [
    "researcher",
    "writer",
    "editor",
  ]);
  assert.equal(run.output, "FINAL: Cats nap for two thirds of every day.");
  for (const step of run.steps) {
    assert.match(step.input, /Task: Write one sentence about cats\./);
    assert.match(step.input, /"audience": "children"/);
  }
  assert.doesNotMatch(run.steps[0].input, /previous step/);
  assert.match(
    run.steps[1].input,
    /Output of researcher \(previous step\):\nFACTS: cats sleep 16 hours/,
  );
  assert.match(
    run.steps[2].input,
    /Output of writer \(previous step\):\nDRAFT/,
  );
  // What the models were actually sent.
  assert.match(request(stack, 1), /FACTS: cats sleep 16 hours/);
  assert.match(request(stack, 1), /You are writer\./);
  assert.match(request(stack, 2), /DRAFT: Cats nap/);
  // The run is stored and listed under its team.
  const stored = await stack.request("GET", `/v1/runs/${run.id}`);
  assert.deepEqual(stored.json, JSON.parse(JSON.stringify(run)));
  const listed = await stack.request("GET", `/v1/runs?team_id=${crew.name}`);
  assert.deepEqual(Object(listed.json).data.map((r: Run) => r.id), [run.id]);
});

Deno.test("sequential: max_iterations stops the run with stop_reason max_iterations", async () => {
  await using stack = await startStack();
  const crew = await team(stack, ["one", "two", "three"], {
    max_iterations: 2,
  });
  stack.model.script([{ text: "first" }, { text: "second" }, {
    text: "third",
  }]);
  const run = await execute(stack, crew.id, { task: "count" });
  assert.equal(run.status, "completed");
  assert.equal(run.stop_reason, "max_iterations");
  assert.equal(run.iterations, 2);
  assert.deepEqual(run.steps.map((s) => s.agent), ["one", "two"]);
  assert.equal(run.output, "second");
  assert.equal(stack.model.requests.length, 2);
});

Deno.test("round_robin: the agents take turns until one calls team__complete, or writes TASK_COMPLETE, or the bound", async () => {
  await using stack = await startStack();
  const pair = await team(stack, ["proposer", "critic"], {
    strategy: "round_robin",
  });
  assert.equal(pair.max_iterations, 10);
  stack.model.script([
    { text: "Idea: a bridge of boats." },
    { text: "Too wobbly; anchor them." },
    {
      tool_calls: [{
        name: "team__complete",
        arguments: { result: "An anchored bridge of boats." },
      }],
    },
    { text: "Done." },
  ]);
  const run = await execute(stack, pair.id, { task: "Cross the river." });
  assert.equal(run.stop_reason, "completed");
  assert.equal(run.output, "An anchored bridge of boats.");
  assert.deepEqual(run.steps.map((s) => s.agent), [
    "proposer",
    "critic",
    "proposer",
  ]);
  assert.match(
    run.steps[2].input,
    /Output of critic \(previous step\):\nToo wobbly/,
  );
  assert.match(request(stack, 0), /team__complete/);

  stack.model.script([{ text: "Plan A." }, {
    text: "Agreed: plan A. TASK_COMPLETE",
  }]);
  const marked = await execute(stack, pair.id, { task: "Pick a plan." });
  assert.equal(marked.stop_reason, "completed");
  assert.equal(marked.output, "Agreed: plan A.");
  assert.equal(marked.steps.length, 2);

  const bounded = await team(stack, ["proposer", "critic"], {
    strategy: "round_robin",
    max_iterations: 3,
  });
  stack.model.script([{ text: "a" }, { text: "b" }, { text: "c" }, {
    text: "d",
  }]);
  const endless = await execute(stack, bounded.id, { task: "Argue." });
  assert.equal(endless.stop_reason, "max_iterations");
  assert.deepEqual(endless.steps.map((s) => s.agent), [
    "proposer",
    "critic",
    "proposer",
  ]);
  assert.equal(endless.output, "c");
});

Deno.test("supervisor: the first agent delegates through team__delegate and answers; the bound refuses further delegation", async () => {
  await using stack = await startStack();
  const crew = await team(stack, ["boss", "poet", "critic"], {
    strategy: "supervisor",
  });
  const delegate = (agent: string, task: string) => ({
    tool_calls: [{ name: "team__delegate", arguments: { agent, task } }],
  });
  stack.model.script([
    delegate("poet", "Write a haiku about rain."),
    { text: "Soft rain on the roof" },
    delegate("critic", "Critique: Soft rain on the roof"),
    { text: "Lovely, but short." },
    { text: "Final: Soft rain on the roof, all night long." },
  ]);
  const run = await execute(stack, crew.id, { task: "A poem about rain." });
  assert.equal(run.stop_reason, "completed");
  assert.equal(run.output, "Final: Soft rain on the roof, all night long.");
  assert.deepEqual(run.steps.map((s) => s.agent), ["poet", "critic", "boss"]);
  assert.equal(run.iterations, 3);
  assert.match(run.steps[0].input, /Write a haiku about rain\./);
  const boss = run.steps[2];
  assert.deepEqual(boss.tool_calls.map((c) => [c.name, c.result]), [
    ["team__delegate", "Soft rain on the roof"],
    ["team__delegate", "Lovely, but short."],
  ]);
  assert.match(request(stack, 0), /team__delegate/);
  assert.match(request(stack, 0), /poet \(the poet\)/);

  const tight = await team(stack, ["boss", "poet", "critic"], {
    strategy: "supervisor",
    max_iterations: 2,
  });
  stack.model.script([
    delegate("poet", "Write."),
    { text: "A line." },
    delegate("critic", "Judge."),
    { text: "Final: a line." },
  ]);
  const bounded = await execute(stack, tight.id, { task: "A poem." });
  assert.equal(bounded.stop_reason, "max_iterations");
  assert.deepEqual(bounded.steps.map((s) => s.agent), ["poet", "boss"]);
  assert.equal(bounded.output, "Final: a line.");
  assert.equal(bounded.steps[1].tool_calls[1].is_error, true);
  assert.match(
    bounded.steps[1].tool_calls[1].result,
    /iteration bound \(2 agent turns\)/,
  );
});

Deno.test("teams: a provider failure fails the run (stored, with the error); bad teams are refused", async () => {
  await using stack = await startStack();
  const crew = await team(stack, ["first", "second"]);
  stack.model.script([{ text: "ok" }]);
  stack.model.failNext(500, 1);
  const run = await execute(stack, crew.id, { task: "t" });
  assert.equal(run.status, "failed");
  assert.equal(run.stop_reason, "error");
  assert.equal(run.error?.code, "provider_error");
  assert.match(run.error?.message ?? "", /openai/);
  assert.equal(run.steps[0].stop_reason, "error");
  assert.equal(
    Run.parse((await stack.request("GET", `/v1/runs/${run.id}`)).json).status,
    "failed",
  );

  const unknown = await stack.request("POST", "/v1/teams", {
    name: "ghosts",
    agents: ["first", "nobody"],
  });
  assert.equal(unknown.status, 400);
  assert.match(unknown.text, /Unknown agent \\"nobody\\"/);
  const lonely = await stack.request("POST", "/v1/teams", {
    name: "lonely",
    agents: ["first"],
    strategy: "supervisor",
  });
  assert.equal(lonely.status, 400);
  const taken = await stack.request("POST", "/v1/teams", {
    name: crew.name,
    agents: ["first"],
  });
  assert.equal(taken.status, 409);

  assert.equal(
    (await stack.request("DELETE", "/v1/agents/second")).status,
    204,
  );
  const orphaned = await stack.request("POST", `/v1/teams/${crew.id}/execute`, {
    task: "t",
  });
  assert.equal(orphaned.status, 409);
  assert.match(orphaned.text, /deleted agent/);
});
