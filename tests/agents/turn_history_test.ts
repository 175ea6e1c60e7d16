// Where a turn reads its conversation: the gateway's listing says whether the
// memory server keeps it. Where the last turn found it so, the history is read
// while the gateway lists (the turn waits for one of them, not both), and a
// listing that disagrees (the memory server gone) reads the agents store.

import assert from "node:assert/strict";
import { AgentsConfig } from "../../agents/config.ts";
import { Conversations } from "../../agents/conversations.ts";
import type { ToolGateway, ToolOutcome } from "../../agents/gateway_link.ts";
import { IdSource } from "../../agents/ids.ts";
import type { Model, ModelMessage, ModelTool } from "../../agents/model.ts";
import type { Agent } from "../../agents/schemas.ts";
import { runTurn } from "../../agents/turn.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { capturedLog } from "../helpers.ts";

const MEMORY_TOOLS: ModelTool[] = [
  "memory__get_conversation_history",
  "memory__store_conversation",
].map((name) => ({ name, description: name, parameters: {} }));

/** A gateway whose listing is held until released, and whose memory server can leave. */
function fakeGateway() {
  const kept: { role: string; content: string }[] = [];
  const gateway = {
    memory: true,
    calls: [] as string[],
    listing: undefined as Promise<void> | undefined,
    running: () => true,
    async listTools(): Promise<ModelTool[]> {
      gateway.calls.push("list");
      await gateway.listing;
      return gateway.memory ? MEMORY_TOOLS : [];
    },
    callTool(
      _agent: string,
      name: string,
      args: Record<string, unknown>,
    ): Promise<ToolOutcome> {
      gateway.calls.push(name);
      if (!gateway.memory) {
        return Promise.resolve({ text: `Unknown tool ${name}`, isError: true });
      }
      if (name === "memory__store_conversation") {
        kept.push(...args.messages as { role: string; content: string }[]);
        return Promise.resolve({ text: "{}", isError: false });
      }
      return Promise.resolve({
        text: "",
        isError: false,
        structured: { messages: kept },
      });
    },
    forget: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  return gateway satisfies ToolGateway;
}

/** A model that answers "ok" and keeps what each request sent. */
function echoModel(): Model & { sent: ModelMessage[][] } {
  const model = {
    id: "test/model",
    sent: [] as ModelMessage[][],
    complete(request: { messages: ModelMessage[] }) {
      model.sent.push(request.messages);
      return Promise.resolve({
        content: "ok",
        tool_calls: [],
        finish: "end_turn" as const,
        usage: { input_tokens: 1, output_tokens: 1 },
      });
    },
  };
  return model;
}

const AGENT: Agent = {
  id: "agt_01HZZZZZZZZZZZZZZZZZZZZZZZ",
  name: "reader",
  model: "test/model",
  system_prompt: "",
  description: "",
  temperature: 0.7,
  max_tokens: 100,
  tools: [],
  resolved_tools: [],
  status: "active",
  created_at: "2026-12-07T00:00:00.000Z",
};

Deno.test("turn: the history is read while the gateway lists once the memory server kept the last one; a listing without it reads the agents store", async () => {
  const gateway = fakeGateway();
  const store = new MemoryStore();
  const conversations = new Conversations({
    gateway,
    store,
    ids: new IdSource(),
  });
  const { log } = capturedLog();
  const deps = {
    gateway,
    conversations,
    config: AgentsConfig.parse({}),
    log,
  };
  const model = echoModel();
  const turn = (message: string) =>
    runTurn(deps, {
      agent: AGENT,
      model,
      message,
      session: "s",
      localTools: [],
      gatewayTools: [],
    });

  // First turn: nothing known yet, so the listing comes first.
  assert.equal((await turn("one")).content, "ok");
  assert.deepEqual(gateway.calls, [
    "list",
    "memory__get_conversation_history",
    "memory__store_conversation",
  ]);

  // Second turn: the history read starts before the listing answers.
  gateway.calls.length = 0;
  const held = Promise.withResolvers<void>();
  gateway.listing = held.promise;
  const second = turn("two");
  await Promise.resolve();
  assert.deepEqual(
    gateway.calls,
    ["memory__get_conversation_history", "list"],
    "both under way, the listing held",
  );
  held.resolve();
  gateway.listing = undefined;
  assert.equal((await second).content, "ok");
  assert.deepEqual(
    model.sent[1].map((m) => m.content),
    ["one", "ok", "two"],
    "the history read meanwhile is the one given to the model",
  );

  // The memory server leaves: the early read fails, the listing says the
  // agents store keeps this turn, and the turn is answered without a warning.
  gateway.memory = false;
  const third = await turn("three");
  assert.equal(third.content, "ok");
  assert.equal(third.warnings, undefined, JSON.stringify(third.warnings));
  assert.deepEqual(model.sent[2].map((m) => m.content), ["three"]);
  const page = await store.list(["conversation", "reader", "s"]);
  assert.equal(page.entries.length, 2, "kept in the agents store");

  // Still without it: no early read of a tool that is not there.
  gateway.calls.length = 0;
  await turn("four");
  assert.equal(gateway.calls[0], "list");
  assert.ok(!gateway.calls.includes("memory__get_conversation_history"));
});
