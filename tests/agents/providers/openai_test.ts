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

const WEATHER: ModelTool = {
  name: "weather__forecast",
  description: "Forecast for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" }, days: { type: "integer" } },
    required: ["city"],
  },
};

Deno.test("openai: a plain text answer (JSON)", async () => {
  await using server = await startModelServer();
  const request = await assertPlainAnswer(
    server,
    "openai/gpt-test",
    [
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is the answer?" },
    ],
    "The answer is 42.",
    { input_tokens: 11, output_tokens: 5 },
  );
  assert.equal(request.path, "/v1/chat/completions");
  assert.equal(request.headers.authorization, `Bearer ${TEST_API_KEY}`);
  assert.deepEqual(request.body, {
    model: "gpt-test",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is the answer?" },
    ],
  });
});

Deno.test("openai: streamed text arrives as several deltas, in order", async () => {
  await using server = await startModelServer();
  await assertStreamsText(
    server,
    "openai/gpt-test",
    "Streaming answers arrive a few words at a time.",
    { input_tokens: 7, output_tokens: 9 },
  );
  assert.deepEqual(server.requests[0].body.stream_options, {
    include_usage: true,
  });
});

for (const stream of [false, true]) {
  const mode = stream ? "streamed" : "JSON";
  Deno.test(`openai: single and parallel tool calls (${mode})`, async () => {
    await using server = await startModelServer();
    await assertToolCalls(server, "openai/gpt-test", stream, {
      tool: WEATHER,
      text: "Let me check.",
      nested: { city: "Zürich", days: 3, opts: { units: ["C", "F"] } },
      parallel: { city: "Oslo" },
      idPattern: /^call_/,
      parallelContent: "",
    });
  });
}

Deno.test("openai: the request carries tools, options, tool calls and their results", async () => {
  await using server = await startModelServer();
  const model = harness(server).models.resolve("openai/gpt-test");
  const messages: ModelMessage[] = [
    { role: "system", content: "You forecast." },
    { role: "user", content: "Weather in Oslo and Rome?" },
    {
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "call_a", name: WEATHER.name, arguments: { city: "Oslo" } },
        { id: "call_b", name: WEATHER.name, arguments: { city: "Rome" } },
      ],
    },
    {
      role: "tool",
      tool_call_id: "call_a",
      name: WEATHER.name,
      content: "rain",
    },
    {
      role: "tool",
      tool_call_id: "call_b",
      name: WEATHER.name,
      content: "sun",
    },
  ];
  const answer = await model.complete({
    messages,
    tools: [WEATHER],
    temperature: 0.2,
    max_tokens: 300,
  });
  assert.equal(answer.finish, "end_turn");
  assert.deepEqual(server.requests[0].body, {
    model: "gpt-test",
    messages: [
      { role: "system", content: "You forecast." },
      { role: "user", content: "Weather in Oslo and Rome?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_a",
            type: "function",
            function: { name: WEATHER.name, arguments: '{"city":"Oslo"}' },
          },
          {
            id: "call_b",
            type: "function",
            function: { name: WEATHER.name, arguments: '{"city":"Rome"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "rain" },
      { role: "tool", tool_call_id: "call_b", content: "sun" },
    ],
    tools: [{
      type: "function",
      function: {
        name: WEATHER.name,
        description: WEATHER.description,
        parameters: WEATHER.parameters,
      },
    }],
    temperature: 0.2,
    max_tokens: 300,
  });
});

Deno.test("openai: api.openai.com gets max_completion_tokens", async () => {
  await using server = await startModelServer();
  const seen: string[] = [];
  // The public endpoint, answered by the model server.
  const fetchFn: typeof fetch = (input, init) => {
    seen.push(String(input));
    return fetch(`${server.openaiBaseUrl}/chat/completions`, init);
  };
  const { models } = harness(undefined, {
    env: { OPENAI_API_KEY: TEST_API_KEY },
    fetchFn,
  });
  await models.resolve("openai/o4-mini").complete({ ...HELLO, max_tokens: 50 });
  assert.deepEqual(seen, ["https://api.openai.com/v1/chat/completions"]);
  assert.equal(server.requests[0].body.max_completion_tokens, 50);
  assert.equal(server.requests[0].body.max_tokens, undefined);
});

Deno.test("openai: an answer cut off by max_tokens says so", async () => {
  await using server = await startModelServer();
  server.script([{ text: "It was a dark and", finish: "max_tokens" }]);
  const model = harness(server).models.resolve("openai/gpt-test");
  const answer = await model.complete(HELLO, { onText: () => {} });
  assert.equal(answer.finish, "max_tokens");
  assert.equal(answer.content, "It was a dark and");
});

Deno.test("openai: invalid tool-call arguments are a 502 naming the tool", async () => {
  await using server = await startModelServer();
  // A scripted raw answer: HTTP 200 with arguments that are not JSON.
  server.failNext(200, 1, {
    body: {
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "call_1",
            type: "function",
            function: { name: WEATHER.name, arguments: '{"city": "Oslo"' },
          }],
        },
        finish_reason: "tool_calls",
      }],
    },
  });
  const model = harness(server).models.resolve("openai/gpt-test");
  const error = await providerError(model.complete(HELLO));
  assert.equal(error.kind, "bad_gateway");
  assert.equal(error.provider, "openai");
  assert.match(error.message, /invalid arguments for tool "weather__forecast"/);
  assert.match(error.message, /\{"city": "Oslo"/);
});

Deno.test("openai: an answer in an unknown shape is a 502", async () => {
  await using server = await startModelServer();
  server.failNext(200, 1, { body: { result: "hi" } });
  const model = harness(server).models.resolve("openai/gpt-test");
  const error = await providerError(model.complete(HELLO));
  assert.equal(error.kind, "bad_gateway");
  assert.match(error.message, /unexpected response: \{"result":"hi"\}/);
});
