// agents__send and teams__execute: MCP clients of the gateway drive the /v1
// agents. The same team run and the same send, once through /v1 and once
// through the gateway's tools (the scripted model server stands in for the
// paid API), answer the same. What an agent's identity may do through the
// tools (exactly what /v1 lets its token do): tests/security/agent_tools_test.ts.

import assert from "node:assert/strict";
import type { Client } from "../../../platform/mcp_sdk.ts";
import { Run, SendReply, Team } from "../../../agents/schemas.ts";
import { type Stack, startStack } from "../../agents/stack.ts";
import { call, textOf } from "./upstreams.ts";

async function crew(stack: Stack, agents: string[]): Promise<Team> {
  for (const name of agents) {
    const created = await stack.request("POST", "/v1/agents", {
      name,
      system_prompt: `You are ${name}.`,
    });
    assert.equal(created.status, 201, created.text);
  }
  const reply = await stack.request("POST", "/v1/teams", {
    name: "crew",
    agents,
  });
  assert.equal(reply.status, 201, reply.text);
  return Team.parse(reply.json);
}

/** A run without what differs between two runs of the same task (ids, times). */
function comparable(run: Run) {
  const { id: _id, created_at: _c, finished_at: _f, ...rest } = run;
  return rest;
}

const SCRIPT = [
  { text: "FACTS: cats sleep 16 hours a day." },
  { text: "FINAL: Cats nap most of the day." },
];

async function toolJson(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<unknown> {
  const result = await call(client, name, args);
  assert.notEqual(result.isError, true, textOf(result));
  assert.deepEqual(JSON.parse(textOf(result)), result.structuredContent);
  return result.structuredContent;
}

Deno.test("teams__execute and agents__send answer what /v1 answers, listed with their origin and task support", async () => {
  await using stack = await startStack();
  const team = await crew(stack, ["researcher", "writer"]);
  const operator = await stack.gateway();

  const { tools } = await operator.listTools();
  const send = tools.find((tool) => tool.name === "agents__send");
  const execute = tools.find((tool) => tool.name === "teams__execute");
  assert.ok(send && execute, tools.map((tool) => tool.name).join(", "));
  assert.deepEqual(send._meta?.["io.agentd/origin"], {
    server: "agents",
    tool: "send",
  });
  assert.deepEqual(execute._meta?.["io.agentd/origin"], {
    server: "teams",
    tool: "execute",
  });
  assert.equal(send.execution?.taskSupport, "optional");
  assert.equal(execute.execution?.taskSupport, "optional");
  assert.deepEqual(execute.inputSchema.required, ["team", "task"]);
  assert.ok(execute.outputSchema, "teams__execute declares its output");
  // In code-unit order among the upstreams' tools.
  const names = tools.map((tool) => tool.name);
  const aggregate = names.slice(names.indexOf("discover_servers") + 1);
  assert.deepEqual(aggregate, [...aggregate].sort());

  stack.model.script(SCRIPT);
  const viaV1 = await stack.request("POST", `/v1/teams/${team.id}/execute`, {
    task: "Write one sentence about cats.",
    context: { audience: "children" },
  });
  assert.equal(viaV1.status, 200, viaV1.text);
  const v1Run = Run.parse(viaV1.json);
  assert.equal(v1Run.status, "completed");

  stack.model.script(SCRIPT);
  const reports: { progress: number; total?: number; message?: string }[] = [];
  const executed = await operator.callTool(
    {
      name: "teams__execute",
      arguments: {
        team: "crew",
        task: "Write one sentence about cats.",
        context: { audience: "children" },
      },
    },
    undefined,
    { onprogress: (progress) => reports.push(progress) },
  );
  assert.notEqual(executed.isError, true, JSON.stringify(executed.content));
  const toolRun = Run.parse(executed.structuredContent);
  // Each agent turn that ended is a progress report (beside the kit's own, if the run was quiet).
  assert.deepEqual(
    reports.filter((report) => !/^teams__execute /.test(report.message ?? "")),
    [
      {
        progress: 1,
        total: 2,
        message: "researcher answered (turn 1 of at most 2)",
      },
      {
        progress: 2,
        total: 2,
        message: "writer answered (turn 2 of at most 2)",
      },
    ],
  );
  assert.notEqual(toolRun.id, v1Run.id);
  assert.deepEqual(comparable(toolRun), comparable(v1Run));
  // The run is stored as any other: /v1 reads back exactly what the tool answered.
  const stored = await stack.request("GET", `/v1/runs/${toolRun.id}`);
  assert.deepEqual(stored.json, toolRun);

  stack.model.script([{ text: "Hello, reader." }]);
  const v1Reply = await stack.request("POST", "/v1/agents/writer/send", {
    message: "Say hello.",
    session_id: "from-v1",
  });
  assert.equal(v1Reply.status, 200, v1Reply.text);
  stack.model.script([{ text: "Hello, reader." }]);
  const toolReply = SendReply.parse(
    await toolJson(operator, "agents__send", {
      agent: "writer",
      message: "Say hello.",
      session_id: "from-mcp",
    }),
  );
  const strip = (reply: SendReply) => {
    const { id: _i, created_at: _c, session_id: _s, ...rest } = reply;
    return rest;
  };
  assert.equal(toolReply.session_id, "from-mcp");
  assert.deepEqual(strip(toolReply), strip(SendReply.parse(v1Reply.json)));

  // On demand: found by search_tools and run through call_tool alike.
  const found = await operator.callTool({
    name: "search_tools",
    arguments: { query: "run a task on a team of agents" },
  });
  assert.match(JSON.stringify(found.structuredContent), /teams__execute/);
  stack.model.script([{ text: "Hello again." }]);
  const throughMeta = SendReply.parse(
    await toolJson(operator, "call_tool", {
      name: "agents__send",
      arguments: { agent: "writer", message: "Again.", session_id: "meta" },
    }),
  );
  assert.equal(throughMeta.content, "Hello again.");

  // Bad arguments are refused before anything runs, naming the field.
  const before = stack.model.requests.length;
  const bad = await call(operator, "teams__execute", { team: "crew" });
  assert.equal(bad.isError, true);
  assert.match(textOf(bad), /task/);
  const unknown = await call(operator, "agents__send", {
    agent: "nobody",
    message: "hi",
  });
  assert.equal(unknown.isError, true);
  const v1Unknown = await stack.request("POST", "/v1/agents/nobody/send", {
    message: "hi",
  });
  assert.equal(v1Unknown.status, 404);
  assert.equal(
    textOf(unknown),
    Reflect.get(Object(v1Unknown.json).error, "message"),
  );
  assert.equal(stack.model.requests.length, before);
});

Deno.test("agents__send and teams__execute inside an agent's own turn: no wait for itself, no run inside its own run", async () => {
  await using stack = await startStack();
  const created = await stack.request("POST", "/v1/agents", {
    name: "looper",
    system_prompt: "You loop.",
    tools: ["agents__send", "teams__execute"],
  });
  assert.equal(created.status, 201, created.text);
  const team = await stack.request("POST", "/v1/teams", {
    name: "solo",
    agents: ["looper"],
  });
  assert.equal(team.status, 201, team.text);

  // Messaging itself in the conversation its turn holds: refused at once, the turn goes on.
  stack.model.script([
    {
      tool_calls: [{
        name: "agents__send",
        arguments: { agent: "looper", message: "again" },
      }],
    },
    { text: "I cannot reach myself here." },
  ]);
  const sent = await stack.request("POST", "/v1/agents/looper/send", {
    message: "Message yourself.",
  });
  assert.equal(sent.status, 200, sent.text);
  const reply = SendReply.parse(sent.json);
  assert.equal(reply.content, "I cannot reach myself here.");
  assert.equal(reply.tool_calls[0].is_error, true);
  assert.match(reply.tool_calls[0].result, /waits for this answer/);

  // Its own team from inside the run: refused; the run ends.
  stack.model.script([
    {
      tool_calls: [{
        name: "teams__execute",
        arguments: { team: "solo", task: "recurse" },
      }],
    },
    { text: "Done without recursion." },
  ]);
  const ran = await stack.request("POST", "/v1/teams/solo/execute", {
    task: "Run your own team.",
  });
  assert.equal(ran.status, 200, ran.text);
  const run = Run.parse(ran.json);
  assert.equal(run.output, "Done without recursion.");
  assert.equal(run.steps.length, 1);
  assert.equal(run.steps[0].tool_calls[0].is_error, true);
  assert.match(run.steps[0].tool_calls[0].result, /running this task already/);
  assert.equal(stack.model.requests.length, 4);
});

Deno.test("agents__send reports the turn's tool calls as progress; the model is asked as /v1 asks it", async () => {
  await using stack = await startStack();
  const created = await stack.request("POST", "/v1/agents", {
    name: "keeper",
    system_prompt: "You remember things.",
    tools: ["memory"],
  });
  assert.equal(created.status, 201, created.text);
  stack.model.script([
    {
      tool_calls: [{
        name: "memory__store_memory",
        arguments: { namespace: "keeper", key: "colour", value: "blue" },
      }],
    },
    { text: "Noted." },
  ]);
  const operator = await stack.gateway();
  const reports: { progress: number; message?: string }[] = [];
  const result = await operator.callTool(
    {
      name: "agents__send",
      arguments: { agent: "keeper", message: "Remember blue." },
    },
    undefined,
    { onprogress: (progress) => reports.push(progress) },
  );
  const reply = SendReply.parse(result.structuredContent);
  assert.equal(reply.content, "Noted.");
  assert.equal(reply.tool_calls[0].is_error, false, reply.tool_calls[0].result);
  assert.deepEqual(
    reports.filter((report) => !/^agents__send /.test(report.message ?? ""))
      .map((report) => [report.progress, report.message]),
    [[1, "calling memory__store_memory"], [2, "memory__store_memory answered"]],
  );
  // Not streamed: the provider was asked without `stream`, as /v1 asks it.
  for (const request of stack.model.requests) {
    assert.notEqual(request.body.stream, true);
  }
});
