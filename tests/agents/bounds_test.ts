// What stops an agent turn, and what a tool failure does: each bound gives
// its stop_reason; tool errors go back to the model and the turn goes on.

import assert from "node:assert/strict";
import { SendReply } from "../../agents/schemas.ts";
import { type Stack, startStack } from "./stack.ts";

async function send(
  stack: Stack,
  agent: string,
  message = "go",
): Promise<SendReply> {
  const reply = await stack.request("POST", `/v1/agents/${agent}/send`, {
    message,
  });
  assert.equal(reply.status, 200, reply.text);
  return SendReply.parse(reply.json);
}

async function create(stack: Stack, body: Record<string, unknown>) {
  const reply = await stack.request("POST", "/v1/agents", body);
  assert.equal(reply.status, 201, reply.text);
}

const list = (limit: number) => ({
  name: "memory__list_memories",
  arguments: { namespace: "bounded", limit },
});

Deno.test("bounds: max_steps stops a turn that keeps calling tools", async () => {
  await using stack = await startStack({ agents: { max_steps: 2 } });
  await create(stack, { name: "bounded", tools: ["memory"] });
  stack.model.script([
    { tool_calls: [list(1)] },
    { tool_calls: [list(2)] },
    { tool_calls: [list(3)] },
  ]);
  const reply = await send(stack, "bounded");
  assert.equal(reply.stop_reason, "max_steps");
  assert.equal(reply.steps, 2);
  assert.equal(reply.tool_calls.length, 2);
  assert.equal(stack.model.requests.length, 2);
});

Deno.test("bounds: the same tool call twice in a row stops the turn (repeated_tool_call) before it runs again", async () => {
  await using stack = await startStack();
  await create(stack, { name: "bounded", tools: ["memory"] });
  stack.model.script([
    { tool_calls: [list(5)] },
    { text: "Checking again.", tool_calls: [list(5)] },
    { text: "never asked for" },
  ]);
  const reply = await send(stack, "bounded");
  assert.equal(reply.stop_reason, "repeated_tool_call");
  assert.equal(reply.tool_calls.length, 1);
  assert.equal(reply.content, "Checking again.");
  assert.equal(stack.model.requests.length, 2);
});

Deno.test("bounds: the turn timeout stops a slow model (timeout) and the agent answers the next message", async () => {
  await using stack = await startStack({ agents: { turn_timeout_ms: 300 } });
  await create(stack, { name: "patient", model: "anthropic/test-model" });
  stack.model.script([{ text: "too late", delay_ms: 5_000 }, {
    text: "on time",
  }]);
  const started = Date.now();
  const reply = await send(stack, "patient");
  assert.equal(reply.stop_reason, "timeout");
  assert.equal(reply.content, "");
  assert.ok(Date.now() - started < 4_000, "the model call was abandoned");
  assert.equal((await send(stack, "patient")).content, "on time");
  // The cut turn is in the history the provider accepted.
  assert.match(
    JSON.stringify(stack.model.requests[1].body.messages),
    /no answer: timeout/,
  );
});

Deno.test("bounds: a finished turn stops its timeout, so the signal its tools got never fires (nor stays in memory) after it", async () => {
  // Long enough for a loaded machine to finish the turn inside it.
  await using stack = await startStack({ agents: { turn_timeout_ms: 2000 } });
  const signals: AbortSignal[] = [];
  stack.service.addLocalTool({
    tool: {
      name: "probe__hold",
      description: "Keeps the signal it is called with",
      parameters: { type: "object", properties: {} },
    },
    call(_args, context) {
      signals.push(context.signal);
      return Promise.resolve("held");
    },
  });
  await create(stack, { name: "brief", tools: ["probe__hold"] });
  stack.model.script([
    { tool_calls: [{ name: "probe__hold", arguments: {} }] },
    { text: "Done." },
  ]);
  const reply = await send(stack, "brief");
  assert.equal(reply.stop_reason, "end_turn");
  assert.equal(signals.length, 1);
  await new Promise((resolve) => setTimeout(resolve, 2200));
  // A timer left running holds the signal and its listeners until it fires.
  assert.equal(signals[0].aborted, false);
});

Deno.test("bounds: an answer cut by the token limit says max_tokens", async () => {
  await using stack = await startStack();
  await create(stack, {
    name: "terse",
    model: "anthropic/test-model",
    max_tokens: 5,
  });
  stack.model.script([{ text: "This answer is cut", finish: "max_tokens" }]);
  const reply = await send(stack, "terse");
  assert.equal(reply.stop_reason, "max_tokens");
  assert.equal(stack.model.requests[0].body.max_tokens, 5);
});

Deno.test("tools: an unknown or failing tool is reported to the model, which goes on; long results are cut", async () => {
  await using stack = await startStack({
    agents: { tool_result_max_chars: 200 },
  });
  await create(stack, { name: "bounded", tools: ["memory"] });
  const admin = await stack.gateway();
  await admin.callTool({
    name: "memory__store_memory",
    arguments: { namespace: "bounded", key: "long", value: "x".repeat(5_000) },
  });
  stack.model.script([
    {
      tool_calls: [
        { name: "browser-automation__navigate", arguments: { url: "x" } },
        {
          name: "memory__retrieve_memory",
          arguments: { namespace: "bounded" },
        },
        {
          name: "memory__retrieve_memory",
          arguments: { namespace: "bounded", key: "long" },
        },
      ],
    },
    { text: "Done despite the errors." },
  ]);
  const reply = await send(stack, "bounded");
  assert.equal(reply.stop_reason, "end_turn");
  assert.equal(reply.content, "Done despite the errors.");
  const [unknown, invalid, long] = reply.tool_calls;
  assert.equal(unknown.is_error, true);
  assert.match(
    unknown.result,
    /Unknown tool "browser-automation__navigate"; this agent's tools are: memory__/,
  );
  assert.equal(invalid.is_error, true);
  assert.match(invalid.result, /key/);
  assert.equal(long.is_error, false);
  assert.match(long.result, /more characters cut\]$/);
  assert.ok(long.result.length < 300);
  const fedBack = JSON.stringify(stack.model.requests[1].body);
  assert.match(fedBack, /Error: Unknown tool/);
});

Deno.test("no gateway: tools are a 503 at create; an agent without tools works and keeps its conversation in the store", async () => {
  await using stack = await startStack({ noServers: true });
  const refused = await stack.request("POST", "/v1/agents", {
    name: "tooled",
    tools: ["memory"],
  });
  assert.equal(refused.status, 503, refused.text);
  assert.match(refused.text, /gateway is not running/);
  const listed = await stack.request("GET", "/v1/agents");
  assert.deepEqual(Object(listed.json).data, []);

  await create(stack, { name: "plain" });
  stack.model.script([{ text: "Hi Bo." }, { text: "Bo." }]);
  await send(stack, "plain", "I am Bo.");
  await send(stack, "plain", "Who am I?");
  assert.match(
    JSON.stringify(stack.model.requests[1].body.messages),
    /I am Bo\..*Hi Bo\./,
  );
});
