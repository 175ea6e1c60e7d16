// The agent runtime as the A2A layer's host: cards of local agents, a seed
// request envelope answered by a real turn, and an agent messaging another
// through its `a2a` tool.

import assert from "node:assert/strict";
import { SendReply } from "../../agents/schemas.ts";
import { startStack } from "./stack.ts";

Deno.test("a2a host: a local agent's card, and a request envelope answered by the agent's turn", async () => {
  await using stack = await startStack();
  await stack.request("POST", "/v1/agents", {
    name: "helper",
    system_prompt: "Answers questions about tea.\nBe kind.",
    tools: ["memory__search_memory"],
  });
  const card = await stack.request("GET", "/v1/a2a/helper/card");
  assert.equal(card.status, 200, card.text);
  const seed = Object(card.json);
  assert.equal(seed.name, "helper");
  assert.ok(seed.protocols.includes("a2a"));
  assert.equal(seed.endpoints.a2a, "http://127.0.0.1:8765/v1/a2a/helper");
  assert.match(seed.version, /^\d+\.\d+\.\d+$/);
  assert.match(card.text, /Answers questions about tea\./);
  assert.match(card.text, /memory__search_memory/);

  stack.model.script([{ text: "Green tea steeps at 80 °C." }]);
  const answered = await stack.request("POST", "/v1/a2a/message", {
    version: "1.0.0",
    type: "request",
    from_agent: "tester",
    to_agent: "helper",
    content: "How hot for green tea?",
    priority: "high",
  });
  assert.equal(answered.status, 200, answered.text);
  assert.equal(Object(answered.json).type, "response");
  assert.equal(Object(answered.json).content, "Green tea steeps at 80 °C.");
  // The turn knew who was asking.
  assert.match(
    JSON.stringify(stack.model.requests[0].body),
    /message from agent \\"tester\\"/,
  );

  const valid = {
    version: "1.0.0",
    type: "request",
    from_agent: "a",
    to_agent: "helper",
    content: "x",
  };
  const { content: _, ...noContent } = valid;
  const bad = [
    [{ ...valid, version: "1" }, 400],
    [noContent, 400],
    [{ ...valid, type: "gossip" }, 400],
    [{ ...valid, to_agent: "nobody" }, 404],
    ["{nope", 400],
  ] as const;
  for (const [body, status] of bad) {
    const reply = await stack.request("POST", "/v1/a2a/message", body);
    assert.equal(reply.status, status, reply.text);
    assert.equal(typeof Object(Object(reply.json).error).message, "string");
  }
  assert.equal((await stack.request("GET", "/v1/a2a/nobody/card")).status, 404);
});

Deno.test("a2a host: an agent with the `a2a` tool asks another agent and uses its answer", async () => {
  await using stack = await startStack();
  const asker = await stack.request("POST", "/v1/agents", {
    name: "asker",
    tools: ["a2a"],
  });
  assert.equal(asker.status, 201, asker.text);
  assert.deepEqual(Object(asker.json).resolved_tools, ["a2a__send_message"]);
  await stack.request("POST", "/v1/agents", {
    name: "oracle",
    model: "anthropic/test-model",
  });
  stack.model.script([
    {
      tool_calls: [{
        name: "a2a__send_message",
        arguments: { to: "oracle", message: "What is 6 times 7?" },
      }],
    },
    { text: "42" },
    { text: "The oracle says 42." },
  ]);
  const reply = await stack.request("POST", "/v1/agents/asker/send", {
    message: "Ask the oracle.",
  });
  assert.equal(reply.status, 200, reply.text);
  const sent = SendReply.parse(reply.json);
  assert.equal(sent.content, "The oracle says 42.");
  assert.deepEqual(sent.tool_calls.map((c) => [c.name, c.result, c.is_error]), [
    ["a2a__send_message", "42", false],
  ]);
  assert.equal(
    stack.model.requests[1].api,
    "anthropic",
    "the oracle's own model answered",
  );
});

Deno.test("a2a tool: an agent cannot send a request to itself, by name in any case or by id", async () => {
  await using stack = await startStack();
  const created = await stack.request("POST", "/v1/agents", {
    name: "Research Agent",
    tools: ["a2a"],
  });
  assert.equal(created.status, 201, created.text);
  const id = String(Object(created.json).id);
  const refs = ["Research Agent", "research agent", id];
  stack.model.script([
    ...refs.map((to) => ({
      tool_calls: [{
        name: "a2a__send_message",
        arguments: { to, message: "Hello me?" },
      }],
    })),
    { text: "Done." },
  ]);
  const reply = await stack.request(
    "POST",
    "/v1/agents/Research%20Agent/send",
    { message: "Ask yourself." },
  );
  assert.equal(reply.status, 200, reply.text);
  const sent = SendReply.parse(reply.json);
  assert.equal(sent.tool_calls.length, refs.length);
  for (const call of sent.tool_calls) {
    assert.equal(call.is_error, true, call.result);
    assert.match(call.result, /cannot send a request to itself/);
  }
  assert.equal(stack.model.requests.length, refs.length + 1, "no nested turn");
});
