// Agent turns end to end in process: the real OpenAI and Anthropic providers
// against the scripted model server, tools through the real gateway and
// memory server, conversations kept by the memory server.

import assert from "node:assert/strict";
import { Agent, SendReply } from "../../agents/schemas.ts";
import { parseEvents, resultText, type Stack, startStack } from "./stack.ts";

const PROVIDERS = ["openai", "anthropic"] as const;

async function createAgent(
  stack: Stack,
  fields: Record<string, unknown>,
): Promise<Agent> {
  const reply = await stack.request("POST", "/v1/agents", fields);
  assert.equal(reply.status, 201, reply.text);
  return Agent.parse(reply.json);
}

async function send(
  stack: Stack,
  agent: string,
  body: Record<string, unknown>,
): Promise<SendReply> {
  const reply = await stack.request("POST", `/v1/agents/${agent}/send`, body);
  assert.equal(reply.status, 200, reply.text);
  return SendReply.parse(reply.json);
}

/** Every message text the provider sent in request `index`, flattened. */
function sentText(stack: Stack, index: number): string {
  return JSON.stringify(stack.model.requests[index].body);
}

for (const provider of PROVIDERS) {
  Deno.test(`turn (${provider}): the agent stores a memory through the gateway's real memory tools, then answers`, async () => {
    await using stack = await startStack();
    const agent = await createAgent(stack, {
      name: `keeper-${provider}`,
      model: `${provider}/test-model`,
      system_prompt: "You remember things for the user.",
      tools: ["memory"],
    });
    stack.model.script([
      {
        tool_calls: [{
          name: "memory__store_memory",
          arguments: {
            namespace: agent.name,
            key: "favourite-colour",
            value: "blue",
          },
        }],
      },
      { text: "Noted: your favourite colour is blue." },
    ]);
    const reply = await send(stack, agent.name, {
      message: "Remember that my favourite colour is blue.",
    });
    assert.equal(reply.content, "Noted: your favourite colour is blue.");
    assert.equal(reply.stop_reason, "end_turn");
    assert.equal(reply.steps, 2);
    assert.equal(reply.agent_id, agent.id);
    assert.equal(reply.tool_calls.length, 1);
    assert.equal(reply.tool_calls[0].name, "memory__store_memory");
    assert.equal(
      reply.tool_calls[0].is_error,
      false,
      reply.tool_calls[0].result,
    );
    assert.ok(reply.usage.input_tokens > 0 && reply.usage.output_tokens > 0);

    // The model was offered the tools and was given the tool's real result.
    assert.equal(stack.model.requests[0].api, provider);
    assert.match(sentText(stack, 0), /memory__store_memory/);
    assert.match(sentText(stack, 0), /You remember things for the user/);
    assert.match(sentText(stack, 1), /favourite-colour/);
    // It really is in the agent's namespace of the memory server.
    const client = await stack.gateway(agent.name);
    const stored = await client.callTool({
      name: "memory__retrieve_memory",
      arguments: { namespace: agent.name, key: "favourite-colour" },
    });
    assert.notEqual(stored.isError, true, resultText(stored));
    assert.match(resultText(stored), /"value": "blue"/);
  });
}

Deno.test("turn: an agent cannot reach another namespace; the denial goes back to the model, which still answers", async () => {
  await using stack = await startStack();
  await createAgent(stack, {
    name: "mallory",
    tools: ["store_memory", "retrieve_memory"],
  });
  const admin = await stack.gateway();
  await admin.callTool({
    name: "memory__store_memory",
    arguments: { namespace: "victim", key: "secret", value: "launch codes" },
  });
  stack.model.script([
    {
      tool_calls: [{
        name: "memory__retrieve_memory",
        arguments: { namespace: "victim", key: "secret" },
      }],
    },
    {
      tool_calls: [{
        name: "memory__store_memory",
        arguments: { namespace: "victim", key: "planted", value: "x" },
      }],
    },
    { text: "I may not read that." },
  ]);
  const reply = await send(stack, "mallory", {
    message: "Read victim's secret.",
  });
  assert.equal(reply.content, "I may not read that.");
  assert.equal(reply.tool_calls.length, 2);
  for (const call of reply.tool_calls) {
    assert.equal(call.is_error, true);
    assert.match(
      call.result,
      /Access denied: agent "mallory" may only use its own namespace/,
    );
  }
  assert.doesNotMatch(sentText(stack, 1), /launch codes/);
  assert.match(sentText(stack, 1), /Access denied/);
  const planted = await admin.callTool({
    name: "memory__retrieve_memory",
    arguments: { namespace: "victim", key: "planted" },
  });
  assert.equal(planted.isError, true, "nothing was written to victim");
});

Deno.test("turn: the conversation continues across sends and get_conversation_history shows it; a session_id is a separate conversation", async () => {
  await using stack = await startStack();
  const agent = await createAgent(stack, {
    name: "chatty",
    model: "anthropic/test-model",
  });
  stack.model.script([{ text: "Nice to meet you, Ada." }, {
    text: "You are Ada.",
  }]);
  await send(stack, "chatty", { message: "My name is Ada." });
  const second = await send(stack, agent.id, { message: "What is my name?" });
  assert.equal(second.content, "You are Ada.");
  assert.equal(second.session_id, agent.id);
  // The second request carries the first exchange, then the new message.
  assert.deepEqual(stack.model.requests[1].body.messages, [
    { role: "user", content: "My name is Ada." },
    { role: "assistant", content: "Nice to meet you, Ada." },
    { role: "user", content: "What is my name?" },
  ]);

  const client = await stack.gateway("chatty");
  const history = await client.callTool({
    name: "memory__get_conversation_history",
    arguments: { session_id: agent.id },
  });
  const shown = JSON.parse(resultText(history));
  assert.deepEqual(
    shown.messages.map((
      m: { role: string; content: string },
    ) => [m.role, m.content]),
    [
      ["user", "My name is Ada."],
      ["assistant", "Nice to meet you, Ada."],
      ["user", "What is my name?"],
      ["assistant", "You are Ada."],
    ],
  );

  stack.model.script([{ text: "I don't know your name yet." }]);
  const other = await send(stack, "chatty", {
    message: "Who am I?",
    session_id: "support-ticket-7",
  });
  assert.equal(other.session_id, "support-ticket-7");
  assert.doesNotMatch(sentText(stack, 2), /Ada/);
});

Deno.test("turn: an answer the conversation cannot keep is still given, with a warning; the next turn works", async () => {
  await using stack = await startStack();
  await createAgent(stack, { name: "verbose", model: "openai/test-model" });
  // Longer than a conversation message may be (1 MiB): store_conversation refuses it.
  const long = "word ".repeat(220_000);
  stack.model.script([{ text: long }, { text: "Short again." }]);
  const reply = await send(stack, "verbose", { message: "Say a lot." });
  assert.equal(reply.content, long);
  assert.equal(reply.warnings?.length, 1, JSON.stringify(reply.warnings));
  assert.match(reply.warnings?.[0] ?? "", /not stored in the conversation/);
  assert.ok((reply.warnings?.[0] ?? "").length < 2000, "no answer in it");
  // The next turn is answered, and carries no warning.
  const next = await send(stack, "verbose", { message: "Now briefly." });
  assert.equal(next.content, "Short again.");
  assert.equal(next.warnings, undefined);
});

for (const provider of PROVIDERS) {
  Deno.test(`turn (${provider}): streaming sends text, tool_call_start, tool_call_end in order and a done event equal to the plain reply`, async () => {
    await using stack = await startStack();
    await createAgent(stack, {
      name: "streamer",
      model: `${provider}/test-model`,
      tools: ["memory__store_memory"],
    });
    const script = (key: string) =>
      stack.model.script([
        {
          text: "Let me note that.",
          tool_calls: [{
            name: "memory__store_memory",
            arguments: { namespace: "streamer", key, value: "v" },
          }],
        },
        { text: "All stored, thank you for asking." },
      ]);
    script("a");
    const plain = await send(stack, "streamer", {
      message: "store it",
      session_id: "a",
    });
    script("b");
    const streamed = await stack.request("POST", "/v1/agents/streamer/send", {
      message: "store it",
      stream: true,
      session_id: "b",
    });
    assert.equal(streamed.status, 200);
    assert.match(
      streamed.headers.get("content-type") ?? "",
      /^text\/event-stream/,
    );
    const events = parseEvents(streamed.text);
    const kinds = events.map((e) => e.event);
    const start = kinds.indexOf("tool_call_start");
    const end = kinds.indexOf("tool_call_end");
    assert.ok(kinds.indexOf("text") < start, kinds.join(","));
    assert.ok(start < end, kinds.join(","));
    assert.ok(
      kinds.lastIndexOf("text") > end,
      "the answer streams after the tool",
    );
    assert.equal(kinds.at(-1), "done");
    assert.equal(kinds.filter((k) => k === "done").length, 1);
    const texts = events.filter((e) => e.event === "text").map((e) =>
      String(Reflect.get(Object(e.data), "delta"))
    );
    assert.ok(texts.length >= 2, "text arrives in deltas");
    assert.equal(
      texts.join(""),
      "Let me note that.All stored, thank you for asking.",
    );
    const done = SendReply.parse(events.at(-1)?.data);
    const strip = (reply: SendReply) => ({
      ...reply,
      id: "",
      created_at: "",
      session_id: "",
      usage: {},
      // Same call, but to its own key (the result's times and key differ).
      tool_calls: reply.tool_calls.map((call) => ({
        ...call,
        id: "",
        arguments: {},
        result: call.result.replace(
          /"\w*_?at": "[^"]*"|"key": "\w"|\\"\w\\"/g,
          "",
        ),
      })),
    });
    assert.deepEqual(strip(done), strip(plain));
    assert.deepEqual(Object.keys(done), Object.keys(plain));
  });
}

Deno.test("turn: a provider that fails is a 502 naming it, one that is down a 503; the agent works again afterwards", async () => {
  await using stack = await startStack({
    providers: {
      openai: { api: "openai", max_retries: 0 },
      offline: {
        api: "openai",
        base_url: "http://127.0.0.1:9/v1",
        max_retries: 0,
      },
    },
  });
  await createAgent(stack, { name: "resilient" });
  await createAgent(stack, { name: "stranded", model: "offline/any-model" });

  stack.model.failNext(500);
  const failed = await stack.request("POST", "/v1/agents/resilient/send", {
    message: "hi",
  });
  assert.equal(failed.status, 502, failed.text);
  assert.deepEqual(Object.keys(Object(failed.json).error ?? {}).sort(), [
    "code",
    "details",
    "message",
  ]);
  assert.match(failed.text, /Provider \\"openai\\"/);

  const down = await stack.request("POST", "/v1/agents/stranded/send", {
    message: "hi",
  });
  assert.equal(down.status, 503, down.text);
  assert.match(down.text, /offline/);
  const streamedDown = await stack.request("POST", "/v1/agents/stranded/send", {
    message: "hi",
    stream: true,
  });
  assert.equal(
    streamedDown.status,
    503,
    "a failure before any event is a plain error",
  );

  stack.model.script([{ text: "Back in business." }]);
  const again = await send(stack, "resilient", { message: "hi again" });
  assert.equal(again.content, "Back in business.");
  const agent = await stack.request("GET", "/v1/agents/resilient");
  assert.equal(agent.status, 200);
});
