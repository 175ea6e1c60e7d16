import assert from "node:assert/strict";
import type { ModelMessage, ModelTool } from "../../../agents/model.ts";
import { startModelServer, TEST_API_KEY } from "../model_server.ts";
import {
  assertPlainAnswer,
  assertStreamsText,
  assertToolCalls,
  harness,
  HELLO,
  providerError,
} from "./harness.ts";

const SEARCH: ModelTool = {
  name: "web__search",
  description: "Search the web",
  parameters: {
    type: "object",
    properties: { query: { type: "string" } },
    required: ["query"],
  },
};

Deno.test("anthropic: a plain text answer (JSON), system as a top-level field", async () => {
  await using server = await startModelServer();
  const request = await assertPlainAnswer(
    server,
    "anthropic/claude-test",
    [
      { role: "system", content: "Answer in French." },
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hello" },
    ],
    "Bonjour.",
    { input_tokens: 20, output_tokens: 3 },
  );
  assert.equal(request.path, "/v1/messages");
  assert.equal(request.headers["x-api-key"], TEST_API_KEY);
  assert.equal(request.headers["anthropic-version"], "2023-06-01");
  assert.equal(request.headers.authorization, undefined);
  assert.deepEqual(request.body, {
    model: "claude-test",
    max_tokens: 4096,
    system: "Answer in French.\n\nBe brief.",
    messages: [{ role: "user", content: "Hello" }],
  });
});

Deno.test("anthropic: streamed text arrives as several deltas, in order", async () => {
  await using server = await startModelServer();
  await assertStreamsText(
    server,
    "anthropic/claude-test",
    "Claude streams text_delta events one after another.",
    { input_tokens: 8, output_tokens: 12 },
  );
});

for (const stream of [false, true]) {
  const mode = stream ? "streamed" : "JSON";
  Deno.test(`anthropic: single and parallel tool calls (${mode})`, async () => {
    await using server = await startModelServer();
    await assertToolCalls(server, "anthropic/claude-test", stream, {
      tool: SEARCH,
      text: "Searching.",
      nested: { query: 'deno "streams"', filters: { site: ["a", "b"] } },
      parallel: { query: "one" },
      idPattern: /^toolu_/,
    });
  });
}

Deno.test("anthropic: tool results go back as tool_result blocks in one user turn", async () => {
  await using server = await startModelServer();
  const model = harness(server).models.resolve("anthropic/claude-test");
  const messages: ModelMessage[] = [
    { role: "system", content: "You search." },
    { role: "user", content: "Find a and b" },
    {
      role: "assistant",
      content: "Looking both up.",
      tool_calls: [
        { id: "toolu_a", name: SEARCH.name, arguments: { query: "a" } },
        { id: "toolu_b", name: SEARCH.name, arguments: { query: "b" } },
      ],
    },
    { role: "tool", tool_call_id: "toolu_a", name: SEARCH.name, content: "A!" },
    { role: "tool", tool_call_id: "toolu_b", name: SEARCH.name, content: "B!" },
    { role: "user", content: "Summarise." },
  ];
  await model.complete({
    messages,
    tools: [SEARCH],
    temperature: 0.5,
    max_tokens: 200,
  });
  assert.deepEqual(server.requests[0].body, {
    model: "claude-test",
    max_tokens: 200,
    system: "You search.",
    messages: [
      { role: "user", content: "Find a and b" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Looking both up." },
          {
            type: "tool_use",
            id: "toolu_a",
            name: SEARCH.name,
            input: { query: "a" },
          },
          {
            type: "tool_use",
            id: "toolu_b",
            name: SEARCH.name,
            input: { query: "b" },
          },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_a", content: "A!" },
          { type: "tool_result", tool_use_id: "toolu_b", content: "B!" },
          { type: "text", text: "Summarise." },
        ],
      },
    ],
    tools: [{
      name: SEARCH.name,
      description: SEARCH.description,
      input_schema: SEARCH.parameters,
    }],
    temperature: 0.5,
  });
});

Deno.test("anthropic: an answer cut off by max_tokens says so (streamed)", async () => {
  await using server = await startModelServer();
  server.script([{
    text: "Once upon",
    tool_calls: [{ name: SEARCH.name, arguments: { query: "x" } }],
    finish: "max_tokens",
  }]);
  const model = harness(server).models.resolve("anthropic/claude-test");
  const answer = await model.complete(HELLO, { onText: () => {} });
  assert.equal(answer.finish, "max_tokens");
  assert.equal(answer.content, "Once upon");
});

Deno.test("anthropic: the provider's own error message on a 400", async () => {
  await using server = await startModelServer();
  server.failNext(400, 1, {
    body: {
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "max_tokens: 999999 > 64000, the maximum for claude-test",
      },
    },
  });
  const model = harness(server).models.resolve("anthropic/claude-test");
  const error = await providerError(model.complete(HELLO));
  assert.equal(error.kind, "bad_gateway");
  assert.equal(
    error.message,
    'Provider "anthropic" rejected the request (HTTP 400): max_tokens: 999999 > 64000, the maximum for claude-test',
  );
  assert.equal(server.requests.length, 1);
});
