// The shared model server fixture itself: other suites trust its wire
// formats and its request rules, so they are pinned here with raw HTTP.
import assert from "node:assert/strict";
import {
  DEFAULT_REPLY,
  startModelServer,
  TEST_API_KEY,
} from "../model_server.ts";

const ANTHROPIC_HEADERS = {
  "content-type": "application/json",
  "x-api-key": TEST_API_KEY,
  "anthropic-version": "2023-06-01",
};

async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = { "content-type": "application/json" },
): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

function dataLines(text: string): unknown[] {
  return text.split("\n\n").filter((e) => e.startsWith("data: "))
    .map((e) => e.slice(6)).map((d) => d === "[DONE]" ? d : JSON.parse(d));
}

Deno.test("model server: OpenAI stream splits text and arguments, usage last", async () => {
  await using server = await startModelServer();
  server.script([{
    text: "two words",
    tool_calls: [{ name: "t", arguments: { long_argument: "value" } }],
  }]);
  const { status, text } = await post(
    `${server.openaiBaseUrl}/chat/completions`,
    {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      stream_options: { include_usage: true },
    },
  );
  assert.equal(status, 200);
  const chunks = dataLines(text);
  assert.equal(chunks.at(-1), "[DONE]");
  const json = JSON.stringify(chunks);
  assert.match(json, /"content":"two "/);
  assert.match(json, /"content":"words"/);
  assert.ok(
    (json.match(/"arguments":"[^"]/g) ?? []).length >= 3,
    "arguments in fragments",
  );
  assert.match(JSON.stringify(chunks.at(-2)), /"choices":\[\],"usage":\{/);
  assert.match(json, /"finish_reason":"tool_calls"/);
});

Deno.test("model server: Anthropic stream has the real event sequence", async () => {
  await using server = await startModelServer();
  server.script([{
    text: "hi there",
    tool_calls: [{ name: "t", arguments: {} }],
  }]);
  const { text } = await post(`${server.anthropicBaseUrl}/v1/messages`, {
    model: "m",
    max_tokens: 10,
    messages: [{ role: "user", content: "hi" }],
    stream: true,
  }, ANTHROPIC_HEADERS);
  const names = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
  assert.deepEqual(names, [
    "message_start",
    "ping",
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  assert.match(text, /"stop_reason":"tool_use"/);
});

Deno.test("model server: steps in order across both APIs, then the default reply", async () => {
  await using server = await startModelServer();
  server.script([{ text: "first" }, { text: "second" }]);
  server.failNext(503, 1);
  const openai = () =>
    post(`${server.openaiBaseUrl}/chat/completions`, {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
  const failed = await openai();
  assert.equal(failed.status, 503);
  assert.match(failed.text, /"message":"Scripted failure \(HTTP 503\)"/);
  assert.match((await openai()).text, /"content":"first"/);
  const anthropic = await post(`${server.anthropicBaseUrl}/v1/messages`, {
    model: "m",
    max_tokens: 10,
    messages: [{ role: "user", content: "hi" }],
  }, ANTHROPIC_HEADERS);
  assert.match(anthropic.text, /"text":"second"/);
  assert.match((await openai()).text, new RegExp(DEFAULT_REPLY));
  assert.deepEqual(server.requests.map((r) => r.api), [
    "openai",
    "openai",
    "anthropic",
    "openai",
  ]);
});

Deno.test("model server: requests the real APIs refuse get their 400", async () => {
  await using server = await startModelServer();
  const openai = `${server.openaiBaseUrl}/chat/completions`;
  const call = {
    role: "assistant",
    content: null,
    tool_calls: [{
      id: "call_1",
      type: "function",
      function: { name: "t", arguments: "{}" },
    }],
  };
  const cases: [string, unknown, RegExp, Record<string, string>?][] = [
    [openai, {
      model: "m",
      messages: [{ role: "user", content: "hi" }, call],
    }, /did not have response messages: call_1/],
    [openai, {
      model: "m",
      messages: [{ role: "tool", tool_call_id: "x", content: "r" }],
    }, /must be a response to a preceeding message with 'tool_calls'/],
    [openai, {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      stream_options: { include_usage: true },
    }, /only allowed when 'stream' is enabled/],
    [
      `${server.url}/v1/messages`,
      {
        model: "m",
        max_tokens: 5,
        messages: [{ role: "system", content: "x" }],
      },
      /top-level `system` parameter/,
      ANTHROPIC_HEADERS,
    ],
    [
      `${server.url}/v1/messages`,
      {
        model: "m",
        max_tokens: 5,
        messages: [
          { role: "user", content: "hi" },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "tu_1", name: "t", input: {} }],
          },
          { role: "user", content: "what?" },
        ],
      },
      /`tool_use` ids were found without `tool_result` blocks.*tu_1/,
      ANTHROPIC_HEADERS,
    ],
    [
      `${server.url}/v1/messages`,
      {
        model: "m",
        messages: [{ role: "user", content: "hi" }],
      },
      /max_tokens: Field required/,
      ANTHROPIC_HEADERS,
    ],
  ];
  for (const [url, body, message, headers] of cases) {
    const { status, text } = await post(url, body, headers);
    assert.equal(status, 400, text);
    assert.match(text, message);
  }
  const keyless = await post(`${server.url}/v1/messages`, {}, {});
  assert.equal(keyless.status, 401);
});
