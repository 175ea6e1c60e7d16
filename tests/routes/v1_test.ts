// The /v1 endpoints through `app.request()`: records, lists with cursors,
// deletes, and bad input on every endpoint: a clear 4xx JSON error, never a
// 5xx, and nothing stored.

import assert from "node:assert/strict";
import { Agent, pageOf, Team } from "../../agents/schemas.ts";
import { ALICE_TOKEN, MIB, type Stack, startStack } from "../agents/stack.ts";

const AgentPage = pageOf(Agent, "AgentPageTest");

async function snapshot(stack: Stack): Promise<string> {
  const lists = await Promise.all(
    ["/v1/agents?limit=100", "/v1/teams?limit=100", "/v1/runs?limit=100"].map(
      (path) => stack.request("GET", path),
    ),
  );
  return JSON.stringify(lists.map((list) => list.json));
}

Deno.test("v1: create, get (by id and name), list with cursors, delete agents and teams", async () => {
  await using stack = await startStack();
  const created = await stack.request("POST", "/v1/agents", {
    name: "alpha",
    model: "openai/gpt-test",
    system_prompt: "Be brief.\nAlways.",
    temperature: 0.2,
    max_tokens: 256,
    tools: ["store_memory"],
  });
  assert.equal(created.status, 201, created.text);
  const alpha = Agent.parse(created.json);
  assert.match(alpha.id, /^agt_[0-9A-Z]{26}$/);
  assert.equal(alpha.status, "active");
  assert.equal(alpha.model, "openai/gpt-test");
  assert.equal(alpha.description, "Be brief.");
  assert.deepEqual(alpha.resolved_tools, ["memory__store_memory"]);
  assert.ok(!Number.isNaN(Date.parse(alpha.created_at)));
  assert.ok(alpha.created_at.endsWith("Z"));

  const defaults = Agent.parse(
    (await stack.request("POST", "/v1/agents", { name: "beta" })).json,
  );
  assert.equal(defaults.model, "openai/test-model", "agents.default_model");
  assert.equal(defaults.temperature, 1);
  assert.equal(defaults.max_tokens, 4096);
  assert.deepEqual(defaults.tools, []);
  await stack.request("POST", "/v1/agents", { name: "gamma" });

  for (const ref of [alpha.id, "alpha"]) {
    const got = await stack.request("GET", `/v1/agents/${ref}`);
    assert.deepEqual(got.json, created.json);
  }
  const first = AgentPage.parse(
    (await stack.request("GET", "/v1/agents?limit=2")).json,
  );
  assert.deepEqual(first.data.map((a) => a.name), ["alpha", "beta"]);
  assert.ok(first.next_cursor);
  const second = AgentPage.parse(
    (await stack.request(
      "GET",
      `/v1/agents?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`,
    )).json,
  );
  assert.deepEqual(second.data.map((a) => a.name), ["gamma"]);
  assert.equal(second.next_cursor, null);
  const all = AgentPage.parse((await stack.request("GET", "/v1/agents")).json);
  assert.equal(all.data.length, 3);

  const team = await stack.request("POST", "/v1/teams", {
    name: "squad",
    agents: [alpha.id, "beta"],
    max_iterations: 5,
  });
  assert.equal(team.status, 201, team.text);
  const squad = Team.parse(team.json);
  assert.deepEqual(squad.agents, [alpha.id, defaults.id]);
  assert.equal(squad.status, "active");
  assert.deepEqual(
    (await stack.request("GET", "/v1/teams/squad")).json,
    team.json,
  );
  assert.deepEqual(
    Object((await stack.request("GET", "/v1/teams")).json).data,
    [team.json],
  );

  const deleted = await stack.request("DELETE", `/v1/agents/${alpha.id}`);
  assert.equal(deleted.status, 204);
  assert.equal(deleted.text, "");
  assert.equal((await stack.request("GET", "/v1/agents/alpha")).status, 404);
  // The name is free again.
  assert.equal(
    (await stack.request("POST", "/v1/agents", { name: "alpha" })).status,
    201,
  );
  assert.equal((await stack.request("DELETE", "/v1/teams/squad")).status, 204);
  assert.equal(
    (await stack.request("GET", `/v1/teams/${squad.id}`)).status,
    404,
  );
});

Deno.test("v1: the seed's own terms work: natural names, bare model names, lookup by name in every route", async () => {
  await using stack = await startStack();
  const created = await stack.request("POST", "/v1/agents", {
    name: "Research Agent",
    model: "gpt-4o",
    system_prompt: "You are a helpful research assistant.",
    temperature: 0.7,
    max_tokens: 1000,
    tools: ["memory"],
  });
  assert.equal(created.status, 201, created.text);
  const research = Agent.parse(created.json);
  assert.equal(research.name, "Research Agent");
  assert.equal(research.model, "gpt-4o", "the model as created");
  assert.equal(research.status, "active");
  const writer = await stack.request("POST", "/v1/agents", {
    name: "Écrivain 研究",
    model: "claude-sonnet-4-5",
  });
  assert.equal(writer.status, 201, writer.text);
  const duplicate = await stack.request("POST", "/v1/agents", {
    name: "research agent",
  });
  assert.equal(duplicate.status, 409, "names are unique regardless of case");

  for (const ref of ["Research%20Agent", "research%20agent", research.id]) {
    const got = await stack.request("GET", `/v1/agents/${ref}`);
    assert.equal(got.status, 200, `${ref}: ${got.text}`);
    assert.deepEqual(got.json, created.json);
  }
  const sent = await stack.request("POST", "/v1/agents/Research%20Agent/send", {
    message: "What is A2A?",
    stream: false,
    max_tokens: 100,
  });
  assert.equal(sent.status, 200, sent.text);
  const toWriter = await stack.request(
    "POST",
    `/v1/agents/${encodeURIComponent("Écrivain 研究")}/send`,
    { message: "Write.", stream: false },
  );
  assert.equal(toWriter.status, 200, toWriter.text);
  assert.deepEqual(
    stack.model.requests.map((r) => [r.api, r.body.model]),
    [["openai", "gpt-4o"], ["anthropic", "claude-sonnet-4-5"]],
    "each bare name reached its provider as written",
  );

  const team = await stack.request("POST", "/v1/teams", {
    name: "Research Team",
    agents: ["Research Agent", "écrivain 研究"],
    strategy: "sequential",
    max_iterations: 5,
  });
  assert.equal(team.status, 201, team.text);
  const run = await stack.request(
    "POST",
    "/v1/teams/Research%20Team/execute",
    { task: "Research A2A", context: { depth: "short" } },
  );
  assert.equal(run.status, 200, run.text);
  const runs = await stack.request("GET", "/v1/runs?team_id=research%20team");
  assert.equal(runs.status, 200, runs.text);
  assert.equal(Object(runs.json).data.length, 1);

  const card = await stack.request("GET", "/v1/a2a/Research%20Agent/card");
  assert.equal(card.status, 200, card.text);
  assert.equal(Object(card.json).name, "Research Agent");
  const a2a = Object(Object(card.json).endpoints).a2a;
  assert.equal(a2a, "http://127.0.0.1:8765/v1/a2a/Research%20Agent");
  const byUrl = await stack.request(
    "GET",
    `${new URL(a2a).pathname}/.well-known/agent-card.json`,
  );
  assert.equal(byUrl.status, 200, "the card's address reaches the agent");

  const message = await stack.request("POST", "/v1/a2a/message", {
    version: "1.0.0",
    type: "notification",
    from_agent: "Écrivain 研究",
    to_agent: "Research Agent",
    content: "Draft ready.",
    priority: "high",
  });
  assert.equal(message.status, 202, message.text);
  const inbox = await stack.request("GET", "/v1/a2a/research%20agent/messages");
  assert.equal(inbox.status, 200, inbox.text);
  assert.equal(Object(inbox.json).data.length, 1);

  assert.equal(
    (await stack.request("DELETE", "/v1/teams/RESEARCH%20TEAM")).status,
    204,
  );
  assert.equal(
    (await stack.request("DELETE", "/v1/agents/Research%20Agent")).status,
    204,
  );
  assert.equal(
    (await stack.request("GET", `/v1/agents/${research.id}`)).status,
    404,
  );
});

const TWO_MIB = JSON.stringify({
  name: "big",
  system_prompt: "x".repeat(2 * MIB),
});

/** [method, path, body, expected status, message pattern?] */
type Case = [string, string, unknown, number, RegExp?];

const CASES: Case[] = [
  // POST /v1/agents
  ["POST", "/v1/agents", '{"name":', 400, /not valid JSON/],
  ["POST", "/v1/agents", "", 400, /empty/],
  ["POST", "/v1/agents", "[]", 400, /JSON object/],
  ["POST", "/v1/agents", { model: "openai/x" }, 400, /name: required/],
  [
    "POST",
    "/v1/agents",
    { name: "x1", colour: "red" },
    400,
    /colour: unknown field/,
  ],
  ["POST", "/v1/agents", { name: 5 }, 400, /name: expected string/],
  [
    "POST",
    "/v1/agents",
    { name: "Bad/Name" },
    400,
    /name: expected 1-64 characters/,
  ],
  ["POST", "/v1/agents", { name: " padded" }, 400, /name: expected 1-64/],
  ["POST", "/v1/agents", { name: "two  spaces" }, 400, /name: expected/],
  ["POST", "/v1/agents", { name: "x".repeat(65) }, 400, /name: expected/],
  [
    "POST",
    "/v1/agents",
    { name: "agt_01ARZ3NDEKTSV4RRFFQ69G5FAV" },
    400,
    /name: must not look like an id/,
  ],
  ["POST", "/v1/agents", { name: "ALPHA" }, 409, /taken/],
  ["POST", "/v1/agents", { name: "x2", temperature: 2.5 }, 400, /temperature/],
  ["POST", "/v1/agents", { name: "x3", temperature: -0.1 }, 400, /temperature/],
  [
    "POST",
    "/v1/agents",
    { name: "x4", temperature: "hot" },
    400,
    /temperature: expected number/,
  ],
  ["POST", "/v1/agents", { name: "x5", max_tokens: 0 }, 400, /max_tokens/],
  ["POST", "/v1/agents", { name: "x6", max_tokens: 1.5 }, 400, /max_tokens/],
  [
    "POST",
    "/v1/agents",
    { name: "x7", max_tokens: 10_000_000 },
    400,
    /max_tokens/,
  ],
  [
    "POST",
    "/v1/agents",
    { name: "x8", tools: "memory" },
    400,
    /tools: expected array/,
  ],
  [
    "POST",
    "/v1/agents",
    { name: "x9", tools: ["retrieve_memry"] },
    400,
    /did you mean memory__retrieve_memory/,
  ],
  [
    "POST",
    "/v1/agents",
    { name: "x10", model: "gpt4" },
    400,
    /No provider for model \\"gpt4\\": tried agents.default_provider \(not set\); prefix gpt-/,
  ],
  [
    "POST",
    "/v1/agents",
    { name: "x10b", model: "gpt 4o" },
    400,
    /model: expected a model name/,
  ],
  [
    "POST",
    "/v1/agents",
    { name: "x11", model: "nosuch/model" },
    400,
    /Unknown provider \\"nosuch\\"/,
  ],
  ["POST", "/v1/agents", { name: "alpha" }, 409, /taken/],
  ["POST", "/v1/agents", TWO_MIB, 413, /too large/],
  // GET /v1/agents, /v1/agents/{id}, DELETE
  ["GET", "/v1/agents?limit=0", undefined, 400, /limit/],
  ["GET", "/v1/agents?limit=101", undefined, 400, /limit/],
  ["GET", "/v1/agents?limit=many", undefined, 400, /limit/],
  ["GET", "/v1/agents?cursor=%21%21not-a-cursor", undefined, 400, /cursor/],
  ["GET", "/v1/agents?sort=name", undefined, 400, /sort: unknown field/],
  ["GET", "/v1/agents/nobody", undefined, 404, /Agent \\"nobody\\" not found/],
  ["GET", "/v1/agents/agt_00000000000000000000000000", undefined, 404],
  ["GET", "/v1/agents/..%2F..%2Fetc", undefined, 404],
  ["DELETE", "/v1/agents/nobody", undefined, 404],
  // POST /v1/agents/{id}/send
  ["POST", "/v1/agents/nobody/send", { message: "hi" }, 404],
  ["POST", "/v1/agents/alpha/send", {}, 400, /message: required/],
  ["POST", "/v1/agents/alpha/send", { message: "" }, 400, /message/],
  [
    "POST",
    "/v1/agents/alpha/send",
    { message: "hi", stream: "yes" },
    400,
    /stream: expected boolean/,
  ],
  [
    "POST",
    "/v1/agents/alpha/send",
    { message: "hi", max_tokens: 0 },
    400,
    /max_tokens/,
  ],
  [
    "POST",
    "/v1/agents/alpha/send",
    { message: "hi", urgent: true },
    400,
    /urgent: unknown field/,
  ],
  [
    "POST",
    "/v1/agents/alpha/send",
    { message: "hi", session_id: "a\u0000b" },
    400,
    /session_id/,
  ],
  ["POST", "/v1/agents/alpha/send", "{message: hi}", 400, /not valid JSON/],
  ["POST", "/v1/agents/alpha/send", TWO_MIB, 413],
  // teams
  ["POST", "/v1/teams", { name: "t1" }, 400, /agents: required/],
  ["POST", "/v1/teams", { name: "t2", agents: [] }, 400, /agents/],
  [
    "POST",
    "/v1/teams",
    { name: "t3", agents: ["alpha"], strategy: "chaos" },
    400,
    /strategy/,
  ],
  [
    "POST",
    "/v1/teams",
    { name: "t4", agents: ["alpha"], max_iterations: 0 },
    400,
    /max_iterations/,
  ],
  [
    "POST",
    "/v1/teams",
    { name: "t5", agents: ["alpha"], max_iterations: 101 },
    400,
    /max_iterations/,
  ],
  [
    "POST",
    "/v1/teams",
    { name: "t6", agents: ["alpha", "ghost"] },
    400,
    /Unknown agent \\"ghost\\"/,
  ],
  [
    "POST",
    "/v1/teams",
    { name: "t7", agents: ["alpha"], leader: "alpha" },
    400,
    /leader: unknown field/,
  ],
  ["POST", "/v1/teams", { name: "squad", agents: ["alpha"] }, 409],
  ["POST", "/v1/teams", "nope", 400, /not valid JSON/],
  ["POST", "/v1/teams", TWO_MIB, 413],
  ["GET", "/v1/teams?limit=0", undefined, 400],
  ["GET", "/v1/teams/nothing", undefined, 404],
  ["DELETE", "/v1/teams/nothing", undefined, 404],
  ["POST", "/v1/teams/nothing/execute", { task: "t" }, 404],
  ["POST", "/v1/teams/squad/execute", {}, 400, /task: required/],
  [
    "POST",
    "/v1/teams/squad/execute",
    { task: "t", context: "ctx" },
    400,
    /context/,
  ],
  [
    "POST",
    "/v1/teams/squad/execute",
    { task: "t", deadline: 5 },
    400,
    /deadline: unknown field/,
  ],
  ["POST", "/v1/teams/squad/execute", "{", 400],
  ["POST", "/v1/teams/squad/execute", TWO_MIB, 413],
  // runs
  ["GET", "/v1/runs/run_00000000000000000000000000", undefined, 404],
  ["GET", "/v1/runs/whatever", undefined, 404],
  ["GET", "/v1/runs?team_id=nothing", undefined, 404],
  ["GET", "/v1/runs?limit=1000", undefined, 400],
  // A2A (the A2A layer's own tests cover it in depth)
  ["GET", "/v1/a2a/ghost/card", undefined, 404],
  ["POST", "/v1/a2a/message", { version: "1.0.0", type: "request" }, 400],
  ["POST", "/v1/a2a/message", TWO_MIB, 413],
  ["GET", "/v1/nothing-here", undefined, 404],
];

Deno.test("v1: bad input on every endpoint is a clear 4xx JSON error, never a 5xx, and stores nothing", async () => {
  await using stack = await startStack();
  assert.equal(
    (await stack.request("POST", "/v1/agents", { name: "alpha" })).status,
    201,
  );
  assert.equal(
    (await stack.request("POST", "/v1/teams", {
      name: "squad",
      agents: ["alpha"],
    })).status,
    201,
  );
  const before = await snapshot(stack);
  for (const [method, path, body, status, pattern] of CASES) {
    const reply = await stack.request(method, path, body);
    const what = `${method} ${path} ${JSON.stringify(body)?.slice(0, 80)} → ${
      reply.text.slice(0, 300)
    }`;
    assert.equal(reply.status, status, `${what}: ${reply.text}`);
    const error = Object(Object(reply.json).error);
    assert.equal(typeof error.code, "string", `${what}: ${reply.text}`);
    assert.equal(typeof error.message, "string", what);
    if (pattern) assert.match(reply.text, pattern, what);
  }
  const wrongType = await stack.request("POST", "/v1/agents", "name=x", {
    "content-type": "application/x-www-form-urlencoded",
  });
  assert.equal(wrongType.status, 415);
  assert.equal(await snapshot(stack), before, "nothing stored");
  assert.equal(stack.model.requests.length, 0, "no model was called");
  assert.ok(
    !stack.logs.some((line) => line.level === "error"),
    JSON.stringify(stack.logs.filter((line) => line.level === "error")),
  );
});

Deno.test("v1: an agent's own token may read and send as itself, not as another agent, nor create or delete agents and teams", async () => {
  await using stack = await startStack();
  const bob = await stack.request("POST", "/v1/agents", { name: "bob" });
  assert.equal(bob.status, 201);
  const alice = await stack.request("POST", "/v1/agents", { name: "alice" });
  assert.equal(alice.status, 201);
  const before = await snapshot(stack);
  const asAlice = { authorization: `Bearer ${ALICE_TOKEN}` };
  for (
    const [method, path, body] of [
      ["POST", "/v1/agents", { name: "mallory" }],
      ["DELETE", "/v1/agents/bob", undefined],
      ["POST", "/v1/teams", { name: "t", agents: ["bob"] }],
    ] as const
  ) {
    const denied = await stack.request(method, path, body, asAlice);
    assert.equal(denied.status, 403, `${method} ${path}: ${denied.text}`);
    assert.match(denied.text, /The token of agent \\"alice\\" cannot create/);
  }
  assert.equal(await snapshot(stack), before, "nothing changed");
  const read = await stack.request("GET", "/v1/agents", undefined, asAlice);
  assert.equal(read.status, 200);
  stack.model.script([{ text: "hi alice" }]);
  const asBob = await stack.request(
    "POST",
    "/v1/agents/bob/send",
    { message: "hello" },
    asAlice,
  );
  assert.equal(asBob.status, 403, asBob.text);
  assert.match(asBob.text, /cannot act as \\"bob\\"/);
  const sent = await stack.request(
    "POST",
    "/v1/agents/alice/send",
    { message: "hello" },
    asAlice,
  );
  assert.equal(sent.status, 200, sent.text);
  assert.equal((sent.json as { content: string }).content, "hi alice");
});
