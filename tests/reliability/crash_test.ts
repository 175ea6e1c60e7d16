// Crash safety: `agentd serve` is killed with SIGKILL again and again (20
// times, 100 with AGENTD_RELIABILITY_LONG=1) while clients write memories,
// agents, teams, team runs, A2A messages and gateway registrations. After
// every restart each acknowledged write is there and readable, every listed
// record parses whole, the daemon starts clean on the same data dir (no
// stale lock, no error logged) and the run in flight at the kill is marked
// interrupted.

import assert from "node:assert/strict";
import { Agent, Run, Team } from "../../agents/schemas.ts";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { type ModelServer, startModelServer } from "../agents/model_server.ts";
import { resultText } from "../agents/stack.ts";
import {
  api,
  type Daemon,
  spawnDaemon,
  spawnServe,
  tempDir,
  waitFor,
} from "../helpers.ts";
import { sized } from "./bad_values.ts";

const KILLS = sized(20, 100);
/** New acknowledged writes each round waits for before the kill. */
const ACKS_PER_ROUND = 12;

interface Acked {
  memories: Map<string, string>;
  agents: Map<string, string>;
  teams: Map<string, string>;
  runs: Set<string>;
  a2a: Set<string>;
  upstreams: Set<string>;
}

function serve(dataDir: string, model: ModelServer): Promise<Daemon> {
  return spawnServe(dataDir, {
    env: {
      ...model.env,
      AGENTD_SERVERS: "gateway,memory",
      AGENTD_AGENTS__DEFAULT_MODEL: "openai/default-model",
      AGENTD_AGENTS__MAX_STEPS: "2",
    },
  });
}

async function mcpClient(url: string, signal?: AbortSignal): Promise<Client> {
  const client = new Client({ name: "crash", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), {
    signal,
  });
  return client;
}

async function allRuns(daemon: Daemon): Promise<Run[]> {
  const runs: Run[] = [];
  let cursor: string | null = null;
  do {
    const page = await api(
      daemon,
      "GET",
      `/v1/runs?limit=100${
        cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""
      }`,
    );
    assert.equal(page.status, 200, page.text);
    runs.push(...Object(page.json).data.map((run: unknown) => Run.parse(run)));
    cursor = Object(page.json).next_cursor;
  } while (cursor);
  return runs;
}

/** Reads back every acknowledged write; returns what is missing or wrong. */
async function verify(daemon: Daemon, acked: Acked): Promise<string[]> {
  const problems: string[] = [];
  const memory = await mcpClient(`${daemon.url}/mcp/memory`);
  const gateway = await mcpClient(`${daemon.url}/mcp`);
  try {
    await Promise.all([...acked.memories].map(async ([key, value]) => {
      const got = await memory.callTool({
        name: "retrieve_memory",
        arguments: { namespace: "crash", key },
      });
      if (got.isError || !resultText(got).includes(value)) {
        problems.push(`memory ${key}: ${resultText(got).slice(0, 120)}`);
      }
    }));
    for (
      const [kind, ids] of [["agents", acked.agents], [
        "teams",
        acked.teams,
      ]] as const
    ) {
      await Promise.all([...ids].map(async ([name, id]) => {
        const got = await api(
          daemon,
          "GET",
          `/v1/${kind}/${encodeURIComponent(name)}`,
        );
        const parsed = (kind === "agents" ? Agent : Team).safeParse(got.json);
        if (got.status !== 200 || !parsed.success || parsed.data.id !== id) {
          problems.push(
            `${kind} ${name}: ${got.status} ${got.text.slice(0, 120)}`,
          );
        }
      }));
    }
    await Promise.all([...acked.runs].map(async (id) => {
      const got = await api(daemon, "GET", `/v1/runs/${id}`);
      const run = Run.safeParse(got.json);
      if (!run.success || run.data.status !== "completed") {
        problems.push(`run ${id}: ${got.text.slice(0, 160)}`);
      }
    }));
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const inbox = await api(
        daemon,
        "GET",
        `/v1/a2a/sink/messages?limit=100${
          cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""
        }`,
      );
      assert.equal(inbox.status, 200, inbox.text);
      for (const message of Object(inbox.json).data) {
        ids.add(Object(message).id);
      }
      cursor = Object(inbox.json).next_cursor;
    } while (cursor);
    for (const id of acked.a2a) {
      if (!ids.has(id)) problems.push(`a2a ${id} missing`);
    }
    const servers = resultText(
      await gateway.callTool({ name: "list_servers", arguments: {} }),
    );
    for (const name of acked.upstreams) {
      if (!servers.includes(`"${name}"`)) {
        problems.push(`upstream ${name} missing`);
      }
    }
    // Nothing half-written: every listed record parses whole.
    for (
      const [path, schema] of [["/v1/agents", Agent], ["/v1/teams", Team], [
        "/v1/runs",
        Run,
      ]] as const
    ) {
      let cursor: string | null = null;
      do {
        const page = await api(
          daemon,
          "GET",
          `${path}?limit=100${
            cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""
          }`,
        );
        assert.equal(page.status, 200, page.text);
        for (const item of Object(page.json).data) {
          if (!schema.safeParse(item).success) {
            problems.push(
              `${path} holds a broken record: ${
                JSON.stringify(item).slice(0, 160)
              }`,
            );
          }
        }
        cursor = Object(page.json).next_cursor;
      } while (cursor);
    }
  } finally {
    await memory.close();
    await gateway.close();
  }
  return problems;
}

/** Writes of every kind until stopped; only answered writes are recorded. */
function startWriters(
  daemon: Daemon,
  round: number,
  acked: Acked,
  upstreamUrl: string,
): { count: () => number; stop: () => Promise<void> } {
  let stopped = false;
  let count = 0;
  // A call cut by the kill may never settle on its own (the SDK waits 60 s).
  const cut = new AbortController();
  const options = { signal: cut.signal };
  const ack = () => count++;
  const loop = async (write: (i: number) => Promise<void>) => {
    for (let i = 0; !stopped; i++) {
      try {
        await write(i);
      } catch {
        return; // the daemon is gone: the write was never acknowledged
      }
    }
  };
  const memoryLoop = async () => {
    const client = await mcpClient(`${daemon.url}/mcp/memory`, cut.signal);
    try {
      await loop(async (i) => {
        const key = `r${round}-m${i}`;
        const value = `value ${key} ${"é".repeat(i % 50)}`;
        const result = await client.callTool(
          {
            name: "store_memory",
            arguments: { namespace: "crash", key, value, tags: ["crash"] },
          },
          undefined,
          options,
        );
        if (result.isError) throw new Error(resultText(result));
        acked.memories.set(key, value);
        ack();
      });
    } finally {
      await client.close().catch(() => {});
    }
  };
  const recordLoop = () =>
    loop(async (i) => {
      const name = `r${round}-a${i}`;
      const agent = await api(daemon, "POST", "/v1/agents", { name });
      if (agent.status !== 201) throw new Error(agent.text);
      acked.agents.set(name, Agent.parse(agent.json).id);
      ack();
      const team = await api(daemon, "POST", "/v1/teams", {
        name,
        agents: [name],
      });
      if (team.status !== 201) throw new Error(team.text);
      acked.teams.set(name, Team.parse(team.json).id);
      ack();
    });
  const runLoop = () =>
    loop(async () => {
      const run = await api(daemon, "POST", "/v1/teams/base/execute", {
        task: "go",
      });
      if (run.status !== 200) throw new Error(run.text);
      const parsed = Run.parse(run.json);
      if (parsed.status === "completed") acked.runs.add(parsed.id);
      ack();
    });
  const a2aLoop = () =>
    loop(async (i) => {
      const sent = await api(daemon, "POST", "/v1/a2a/message", {
        version: "1.0.0",
        type: "notification",
        from_agent: "base",
        to_agent: "sink",
        content: `round ${round} note ${i}`,
      });
      if (sent.status !== 202) throw new Error(sent.text);
      acked.a2a.add(Object(sent.json).id);
      ack();
    });
  const registerOnce = async () => {
    const client = await mcpClient(`${daemon.url}/mcp`, cut.signal);
    try {
      const name = `up${round}`;
      const result = await client.callTool(
        {
          name: "register_server",
          arguments: { name, url: `${upstreamUrl}?round=${round}` },
        },
        undefined,
        options,
      );
      if (!result.isError) {
        acked.upstreams.add(name);
        ack();
      }
    } catch {
      // killed mid-call: not acknowledged
    } finally {
      await client.close().catch(() => {});
    }
  };
  const all = Promise.all([
    memoryLoop().catch(() => {}),
    recordLoop(),
    runLoop(),
    a2aLoop(),
    registerOnce(),
  ]);
  return {
    count: () => count,
    async stop() {
      stopped = true;
      cut.abort();
      await all;
    },
  };
}

Deno.test("crash: SIGKILL in a loop while clients write: every acknowledged write survives, runs in flight are interrupted", async () => {
  await using dir = await tempDir();
  await using upstreamDir = await tempDir();
  await using model = await startModelServer();
  const upstream = await spawnDaemon(["mcp", "memory", "--port", "0"], {
    env: { AGENTD_DATA_DIR: upstreamDir.path, XDG_DATA_HOME: upstreamDir.path },
  });
  const acked: Acked = {
    memories: new Map(),
    agents: new Map(),
    teams: new Map(),
    runs: new Set(),
    a2a: new Set(),
    upstreams: new Set(),
  };
  let interruptedRun: string | undefined;
  try {
    let daemon = await serve(dir.path, model);
    for (
      const [path, body] of [
        ["/v1/agents", { name: "base" }],
        ["/v1/agents", { name: "sink" }],
        ["/v1/agents", { name: "slowpoke" }],
        ["/v1/teams", { name: "base", agents: ["base"] }],
        ["/v1/teams", { name: "slow", agents: ["slowpoke"] }],
      ] as const
    ) {
      assert.equal((await api(daemon, "POST", path, body)).status, 201);
    }
    for (let round = 0; round < KILLS; round++) {
      // A run in flight at the kill: the model holds its answer.
      model.script([{ text: "too late", delay_ms: 120_000 }]);
      const asked = model.requests.length;
      const slow = api(daemon, "POST", "/v1/teams/slow/execute", {
        task: "wait",
      })
        .catch(() => undefined);
      await waitFor(() => model.requests.length, (n) => n > asked, 30_000);
      interruptedRun = (await allRuns(daemon)).find((run) =>
        run.status === "running" && run.task === "wait"
      )?.id;
      assert.ok(interruptedRun, "the slow run is listed as running");
      const writers = startWriters(daemon, round, acked, `${upstream.url}/mcp`);
      await waitFor(
        writers.count,
        (n) => n >= ACKS_PER_ROUND + (round % 7),
        60_000,
      );
      await daemon.stop("SIGKILL");
      await writers.stop();
      await slow;

      daemon = await serve(dir.path, model);
      const problems = await verify(daemon, acked);
      assert.deepEqual(problems, [], `round ${round}`);
      const run = Run.parse(
        (await api(daemon, "GET", `/v1/runs/${interruptedRun}`)).json,
      );
      assert.equal(run.status, "interrupted", `round ${round}`);
      const errors = daemon.logs.filter((line) => line.level === "error");
      assert.deepEqual(errors, [], `round ${round}: started with errors`);
      assert.deepEqual(daemon.stray, []);
    }
    assert.equal((await daemon.stop()).code, 0, "a clean stop at the end");
  } finally {
    await upstream.stop();
  }
  const total = acked.memories.size + acked.agents.size + acked.teams.size +
    acked.runs.size + acked.a2a.size + acked.upstreams.size;
  assert.ok(total >= KILLS * ACKS_PER_ROUND, `${total} acknowledged writes`);
  assert.ok(
    acked.upstreams.size > 0 && acked.runs.size > 0 && acked.a2a.size > 0,
  );
  console.log(
    `crash: ${KILLS} kills, ${total} acknowledged writes, all present`,
  );
});
