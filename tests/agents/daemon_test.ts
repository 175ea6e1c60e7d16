// The /v1 API of a real `agentd serve` over a socket, with the model server
// standing in for OpenAI and Anthropic: every endpoint, bad input, restarts
// that keep agents, teams, runs and conversations, and a run cut by a kill.

import assert from "node:assert/strict";
import { Agent, Run, SendReply, Team } from "../../agents/schemas.ts";
import {
  api,
  type Daemon,
  runCli,
  spawnServe,
  tempDir,
  waitFor,
} from "../helpers.ts";
import { type ModelServer, startModelServer } from "./model_server.ts";
import { MIB, parseEvents } from "./stack.ts";

function serve(dataDir: string, model: ModelServer): Promise<Daemon> {
  return spawnServe(dataDir, {
    env: {
      ...model.env,
      AGENTD_SERVERS: "gateway,memory",
      AGENTD_AGENTS__DEFAULT_MODEL: "openai/default-model",
      AGENTD_AGENTS__MAX_STEPS: "4",
    },
  });
}

Deno.test("daemon: every /v1 endpoint over a real socket, with bad input answered 4xx and nothing stored", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await serve(dir.path, model);
  try {
    const created = await api(daemon, "POST", "/v1/agents", {
      name: "scribe",
      model: "openai/gpt-test",
      tools: ["memory"],
    });
    assert.equal(created.status, 201, created.text);
    const scribe = Agent.parse(created.json);
    await api(daemon, "POST", "/v1/agents", {
      name: "reviewer",
      model: "anthropic/claude-test",
    });
    const defaulted = await api(daemon, "POST", "/v1/agents", {
      name: "plain",
    });
    assert.equal(Agent.parse(defaulted.json).model, "openai/default-model");
    assert.equal((await api(daemon, "DELETE", "/v1/agents/plain")).status, 204);
    assert.deepEqual(
      Object((await api(daemon, "GET", "/v1/agents")).json).data.map((
        a: Agent,
      ) => a.name),
      [
        "scribe",
        "reviewer",
      ],
    );
    assert.deepEqual(
      (await api(daemon, "GET", `/v1/agents/${scribe.id}`)).json,
      created.json,
    );

    model.script([
      {
        tool_calls: [{
          name: "memory__store_memory",
          arguments: {
            namespace: "scribe",
            key: "note",
            value: "over the socket",
          },
        }],
      },
      { text: "Stored the note." },
    ]);
    const sent = await api(daemon, "POST", "/v1/agents/scribe/send", {
      message: "note this",
    });
    assert.equal(sent.status, 200, sent.text);
    const reply = SendReply.parse(sent.json);
    assert.equal(reply.content, "Stored the note.");
    assert.equal(
      reply.tool_calls[0].is_error,
      false,
      reply.tool_calls[0].result,
    );

    model.script([{
      text: "Streaming over the socket works fine.",
      chunk_delay_ms: 30,
    }]);
    const streamed = await api(daemon, "POST", "/v1/agents/reviewer/send", {
      message: "stream please",
      stream: true,
    });
    assert.match(
      streamed.headers.get("content-type") ?? "",
      /text\/event-stream/,
    );
    const events = parseEvents(streamed.text);
    assert.equal(events.at(-1)?.event, "done");
    assert.ok(events.filter((e) => e.event === "text").length >= 2);
    assert.equal(
      SendReply.parse(events.at(-1)?.data).content,
      "Streaming over the socket works fine.",
    );

    // The seed's terms: a name as people write it, a bare model name.
    const research = await api(daemon, "POST", "/v1/agents", {
      name: "Research Agent",
      model: "claude-sonnet-4-5",
    });
    assert.equal(research.status, 201, research.text);
    assert.equal(Agent.parse(research.json).model, "claude-sonnet-4-5");
    model.script([{ text: "Researched." }]);
    const asked = await api(
      daemon,
      "POST",
      "/v1/agents/Research%20Agent/send",
      { message: "What is A2A?", stream: false },
    );
    assert.equal(asked.status, 200, asked.text);
    assert.equal(SendReply.parse(asked.json).content, "Researched.");
    const last = model.requests.at(-1);
    assert.deepEqual([last?.api, last?.body.model], [
      "anthropic",
      "claude-sonnet-4-5",
    ]);
    assert.equal(
      (await api(daemon, "DELETE", "/v1/agents/research%20agent")).status,
      204,
    );

    const team = await api(daemon, "POST", "/v1/teams", {
      name: "desk",
      agents: ["scribe", "reviewer"],
      strategy: "sequential",
      max_iterations: 2,
    });
    assert.equal(team.status, 201, team.text);
    const desk = Team.parse(team.json);
    assert.equal((await api(daemon, "GET", "/v1/teams/desk")).status, 200);
    assert.equal(
      Object((await api(daemon, "GET", "/v1/teams")).json).data.length,
      1,
    );
    model.script([{ text: "draft" }, { text: "reviewed draft" }]);
    const executed = await api(daemon, "POST", `/v1/teams/${desk.id}/execute`, {
      task: "Write a note.",
      context: { tone: "dry" },
    });
    assert.equal(executed.status, 200, executed.text);
    const run = Run.parse(executed.json);
    assert.equal(run.output, "reviewed draft");
    assert.deepEqual(
      (await api(daemon, "GET", `/v1/runs/${run.id}`)).json,
      executed.json,
    );
    assert.equal(
      Object((await api(daemon, "GET", `/v1/runs?team_id=desk`)).json).data
        .length,
      1,
    );
    assert.equal(
      Object((await api(daemon, "GET", "/v1/openapi.json")).json).openapi,
      "3.1.0",
    );
    assert.match(
      (await api(daemon, "GET", "/docs")).text,
      /<h1>agentd \/v1 API/,
    );

    const before = JSON.stringify([
      (await api(daemon, "GET", "/v1/agents")).json,
      (await api(daemon, "GET", "/v1/teams")).json,
      (await api(daemon, "GET", "/v1/runs")).json,
    ]);
    const bad: [string, string, unknown, number][] = [
      ["POST", "/v1/agents", '{"name": "broken"', 400],
      ["POST", "/v1/agents", { name: "extra", mood: "happy" }, 400],
      ["POST", "/v1/agents", { name: "hot", temperature: 9 }, 400],
      ["POST", "/v1/agents", { name: "scribe" }, 409],
      ["POST", "/v1/agents", { name: "Scribe" }, 409],
      ["POST", "/v1/agents", { name: "odd", model: "mystery-model" }, 400],
      [
        "POST",
        "/v1/agents",
        JSON.stringify({ name: "huge", system_prompt: "x".repeat(2 * MIB) }),
        413,
      ],
      ["GET", "/v1/agents/ghost", undefined, 404],
      ["DELETE", "/v1/agents/ghost", undefined, 404],
      ["POST", "/v1/agents/ghost/send", { message: "hi" }, 404],
      ["POST", "/v1/agents/scribe/send", { text: "hi" }, 400],
      ["POST", "/v1/teams", { name: "t", agents: ["ghost"] }, 400],
      ["POST", "/v1/teams/ghost/execute", { task: "t" }, 404],
      ["POST", "/v1/teams/desk/execute", { task: 5 }, 400],
      ["GET", "/v1/runs/run_ghost", undefined, 404],
      ["GET", "/v1/agents?limit=500", undefined, 400],
    ];
    for (const [method, path, body, status] of bad) {
      const answer = await api(daemon, method, path, body);
      assert.equal(
        answer.status,
        status,
        `${method} ${path}: ${answer.text.slice(0, 200)}`,
      );
      assert.equal(typeof Object(Object(answer.json).error).message, "string");
    }
    const after = JSON.stringify([
      (await api(daemon, "GET", "/v1/agents")).json,
      (await api(daemon, "GET", "/v1/teams")).json,
      (await api(daemon, "GET", "/v1/runs")).json,
    ]);
    assert.equal(after, before, "nothing stored by bad requests");

    assert.equal((await api(daemon, "DELETE", "/v1/teams/desk")).status, 204);
    assert.equal(
      (await api(daemon, "DELETE", `/v1/agents/${scribe.id}`)).status,
      204,
    );
    assert.equal((await api(daemon, "GET", "/v1/agents/scribe")).status, 404);
  } finally {
    const status = await daemon.stop();
    assert.equal(status.code, 0);
  }
  assert.deepEqual(daemon.stray, []);
  assert.ok(
    !daemon.logs.some((line) => line.level === "error"),
    JSON.stringify(daemon.logs.filter((l) => l.level === "error")),
  );
});

Deno.test("daemon: a restart keeps agents, teams, runs and conversations", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  let first = await serve(dir.path, model);
  let agent: Agent;
  let run: Run;
  try {
    agent = Agent.parse(
      (await api(first, "POST", "/v1/agents", {
        name: "keeper",
        model: "openai/m",
      })).json,
    );
    await api(first, "POST", "/v1/teams", { name: "solo", agents: ["keeper"] });
    model.script([{ text: "first answer" }, { text: "run output" }]);
    await api(first, "POST", "/v1/agents/keeper/send", {
      message: "remember the word teapot",
    });
    run = Run.parse(
      (await api(first, "POST", "/v1/teams/solo/execute", { task: "t" })).json,
    );
  } finally {
    assert.equal((await first.stop()).code, 0);
  }
  first = await serve(dir.path, model);
  try {
    assert.deepEqual(
      Agent.parse((await api(first, "GET", "/v1/agents/keeper")).json),
      agent,
    );
    assert.equal(
      Team.parse((await api(first, "GET", "/v1/teams/solo")).json).name,
      "solo",
    );
    assert.deepEqual(
      Run.parse((await api(first, "GET", `/v1/runs/${run.id}`)).json),
      run,
    );
    model.script([{ text: "teapot" }]);
    await api(first, "POST", "/v1/agents/keeper/send", {
      message: "which word?",
    });
    assert.match(
      JSON.stringify(model.requests.at(-1)?.body),
      /remember the word teapot.*first answer.*which word/,
    );
  } finally {
    assert.equal((await first.stop()).code, 0);
  }
});

Deno.test("daemon: a run cut short by a kill is marked interrupted after restart", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await serve(dir.path, model);
  let runId = "";
  try {
    await api(daemon, "POST", "/v1/agents", {
      name: "slow",
      model: "openai/m",
    });
    await api(daemon, "POST", "/v1/teams", {
      name: "slowteam",
      agents: ["slow"],
    });
    model.script([{ text: "never delivered", delay_ms: 60_000 }]);
    const pending = api(daemon, "POST", "/v1/teams/slowteam/execute", {
      task: "take your time",
    })
      .catch((error) => error);
    const runs = await waitFor(
      () => api(daemon, "GET", "/v1/runs"),
      (reply) => Object(reply.json).data?.length === 1,
    );
    const running = Run.parse(Object(runs.json).data[0]);
    assert.equal(running.status, "running");
    runId = running.id;
    await waitFor(() => model.requests.length, (count) => count === 1);
    await daemon.stop("SIGKILL");
    await pending;
  } finally {
    await daemon.stop("SIGKILL");
  }
  const again = await serve(dir.path, model);
  try {
    const run = Run.parse((await api(again, "GET", `/v1/runs/${runId}`)).json);
    assert.equal(run.status, "interrupted");
    assert.equal(run.stop_reason, "interrupted");
    assert.ok(run.finished_at);
    assert.match(
      run.error?.message ?? "",
      /stopped while this run was in progress/,
    );
  } finally {
    assert.equal((await again.stop()).code, 0);
  }
});

Deno.test("daemon: SIGTERM interrupts a running team run and answers a waiting send with 503, then exits 0", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await spawnServe(dir.path, {
    env: {
      ...model.env,
      AGENTD_SERVERS: "gateway,memory",
      AGENTD_SHUTDOWN_TIMEOUT_MS: "300",
    },
  });
  await api(daemon, "POST", "/v1/agents", {
    name: "dawdler",
    model: "openai/m",
  });
  await api(daemon, "POST", "/v1/agents", {
    name: "loafer",
    model: "openai/m",
  });
  await api(daemon, "POST", "/v1/teams", { name: "idle", agents: ["dawdler"] });
  model.script([
    { text: "late", delay_ms: 60_000 },
    { text: "later", delay_ms: 60_000 },
  ]);
  const run = api(daemon, "POST", "/v1/teams/idle/execute", { task: "t" });
  await waitFor(() => model.requests.length, (count) => count === 1);
  const send = api(daemon, "POST", "/v1/agents/loafer/send", { message: "hi" });
  await waitFor(() => model.requests.length, (count) => count === 2);
  const status = await daemon.stop("SIGTERM");
  assert.equal(status.code, 0);
  const ran = await run;
  assert.equal(ran.status, 200, ran.text);
  assert.equal(Run.parse(ran.json).status, "interrupted");
  const sent = await send;
  assert.equal(sent.status, 503, sent.text);
  assert.match(sent.text, /shut down during this turn/);
  assert.ok(
    !daemon.logs.some((line) => line.level === "error"),
    JSON.stringify(daemon.logs.filter((l) => l.level === "error")),
  );
});

Deno.test("daemon: an agents.default_provider that names no provider stops serve with exit 1 and says why", async () => {
  await using dir = await tempDir();
  const run = await runCli(
    ["serve", "--port", "0", "--data-dir", dir.path],
    {
      AGENTD_SERVERS: "memory",
      AGENTD_AGENTS__DEFAULT_PROVIDER: "nosuch",
      HOME: dir.path,
    },
  );
  assert.equal(run.code, 1, run.stderr);
  assert.match(
    run.stderr,
    /agents\.default_provider: "nosuch" is not a provider; providers: anthropic, ollama, openai, openrouter/,
  );
});
