// agentd's /v1 API in one run, as ratios: the request rate of
// `GET /v1/agents` against a bare Hono app on Deno, and the latency one agent
// turn adds over the work the turn is made of.
//
// Both servers are child processes started once at module load:
//
//   agentd   `deno run -A main.ts serve --port 0 --data-dir TMP --config F`
//            (F is `{}`, so no user config applies), every built-in server:
//            gateway, memory, browser-automation (its browser starts on first
//            use, so never here); AGENTS agents created through POST
//            /v1/agents, model `openai/bench` pointed (OPENAI_BASE_URL) at the
//            scripted model server below
//   bare     Deno.serve + one Hono route GET /v1/agents answering c.json() of
//            a page held in memory: the same records agentd lists, the same
//            `{data, next_cursor}` body byte for byte. Written to a temp file
//            and run with the repository's deno.json (same Hono version)
//
// The bench process drives both with fetch (keep-alive, Deno's connection
// pool). On the GET path agentd runs its guards as checks in one middleware
// with the request log (no token is configured and the bench sends no Origin
// or body, so none needs a promise), and answers from its in-process view of
// the agents (agents/catalog_view.ts: the version key is got again only when
// SQLite's WAL-index header says a commit finished since,
// platform/store/kv_change_mark.ts; the page serialized once per version).
//
// The agent turn runs against tests/agents/model_server.ts in a process of
// its own (bench/model_process.ts: OpenAI chat completions), as a provider
// is: agentd's model calls and the baseline's both cross a process boundary.
// (Until 2026-12-07 it ran in this process, and the baseline's calls alone
// woke no other process: about 0.1 ms less each way than agentd's; bench/
// README.md, /v1 API, "Issue 37, round five".) A send is answered with one
// step asking for `memory__store_memory`, then one step of text (or the text
// alone: the turn with no tool call). Its baseline is the same work done
// directly: the model requests agentd made in a send (recorded outside the
// timing), replayed with fetch to the model server (same bodies, same
// answers), and for the tool step
// one `tools/call store_memory` with the same arguments over agentd's
// `/mcp/memory` with an MCP SDK client. Every send uses a new session_id, so
// the conversation history is empty and every turn does the same work; a third
// case sends every message to one session, whose history is filled to
// HISTORY_MESSAGES before timing, so each of its turns reads that many
// messages and sends them to the model (the baseline replays that request). Besides
// those calls a turn does: the agent from its view (one version get); one
// tools/list of the gateway (the agent's tools, and whether the memory server
// keeps conversations); get_conversation_history and store_conversation
// through the gateway (in process, bound to the agent; each writes an audit
// record, and the append is one checked commit), and the HTTP and zod
// handling of the send.
//
// Printed besides the bench table (Deno.bench: avg/p75/p99 per request):
//   GET      p50/p99 of requests interleaved across the two servers, ratio
//            agentd ÷ bare; requests/s with IN_FLIGHT concurrent requests
//            (RATE_REQUESTS per server in RATE_ROUNDS rounds taking the
//            servers in turn) and the CPU ms per request in each server and
//            in this process (Linux /proc)
//   turn     p50/p99 of sends and of their direct baselines, interleaved; the
//            added ms and the ratio; CPU ms per turn in agentd
//   memory   VmRSS/VmHWM of agentd and of the bare app after warm-up and
//            after the run
//
//   deno bench --allow-all bench/v1_bench.ts

import { join } from "node:path";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport } from "../platform/mcp_sdk.ts";
import {
  type RecordedRequest,
  type ScriptStep,
  TEST_API_KEY,
} from "../tests/agents/model_server.ts";
import { TOOL_MARK } from "./model_process.ts";
import { agentdPort, portFromOutput } from "./mcp_lib.ts";
import {
  agentdCommand,
  atCleanUp,
  cleanUp,
  type Command,
  DENO,
  firstLine,
  interleaved,
  killOnExit,
  ms,
  percentile,
  printMemoryTable,
  ratio,
  ROOT,
  tempDir,
  type Throughput,
  throughput,
} from "./bench_lib.ts";

const AGENTS = 5;
const GET_WARMUP = 500;
const GET_ROUNDS = 1000;
const RATE_REQUESTS = 4000;
const RATE_ROUNDS = 4;
const IN_FLIGHT = 16;
const TURN_WARMUP = 20;
const TURN_ROUNDS = Number(Deno.env.get("BENCH_V1_TURN_ROUNDS") ?? 120);
/** BENCH_V1_PART=turn: the turns alone (no GET part), e.g. for before/after runs. */
const TURNS_ONLY = Deno.env.get("BENCH_V1_PART") === "turn";
/** agents.history_limit's default: a turn in a long conversation reads this many messages. */
const HISTORY_MESSAGES = 50;
const HISTORY_LABEL = `no tool call, ${HISTORY_MESSAGES}-message history`;

const TOOL_AGENT = "bench-agent";
const TOOL = "store_memory";
const TOOL_ARGS = {
  namespace: TOOL_AGENT,
  key: "bench-note",
  value: "The v1 bench stored this note while timing one agent turn.",
  tags: ["bench"],
};

// ------------------------------------------------------------------- shapes

const AgentRecord = z.object({ id: z.string(), name: z.string() }).loose();
const AgentPage = z.object({
  data: z.array(AgentRecord),
  next_cursor: z.null(),
});
const SendReply = z.object({
  content: z.string(),
  stop_reason: z.string(),
  steps: z.number(),
  tool_calls: z.array(
    z.object({ name: z.string(), is_error: z.boolean(), result: z.string() })
      .loose(),
  ),
}).loose();
const ToolResult = z.object({
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  isError: z.boolean().optional(),
});

// ---------------------------------------------------------------- spawning

/** Spawns `cmd` and reads its port from the `{"event":"listening"}` line on stderr. */
async function spawnListening(
  label: string,
  cmd: Command,
): Promise<{ pid: number; port: number; readyMs: number }> {
  const started = performance.now();
  const child = new Deno.Command(cmd.command, {
    args: cmd.args,
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...cmd.env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  killOnExit(child.pid);
  const port = await portFromOutput(label, child.stderr, agentdPort);
  return { pid: child.pid, port, readyMs: performance.now() - started };
}

/** The scripted model server in a process of its own (bench/model_process.ts). */
interface BenchModel {
  url: string;
  /** The requests it answered since the last call. */
  take(): Promise<RecordedRequest[]>;
}

async function spawnModel(
  steps: { tool: ScriptStep; text: ScriptStep },
): Promise<BenchModel> {
  const child = new Deno.Command(DENO, {
    args: [
      "run",
      "-A",
      join(ROOT, "bench/model_process.ts"),
      JSON.stringify(steps),
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  killOnExit(child.pid);
  const { url, control } = JSON.parse(
    await firstLine(child.stdout, "bench/model_process.ts"),
  );
  return {
    url,
    take: async () => (await (await fetch(`${control}/requests`)).json()),
  };
}

/** The bare app: Deno.serve and one Hono route answering `page` from memory. */
const BARE_APP = `
import { Hono } from "hono";

const page = JSON.parse(Deno.readTextFileSync(Deno.args[0]));
const app = new Hono();
app.get("/v1/agents", (c) => c.json(page));
Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) =>
    console.error(JSON.stringify({ event: "listening", port })),
}, app.fetch);
`;

async function json(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown; bytes: number }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return {
    status: response.status,
    body: JSON.parse(text),
    bytes: text.length,
  };
}

async function post(url: string, body: unknown): Promise<unknown> {
  const reply = await json(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (reply.status >= 300) {
    throw new Error(
      `POST ${url}: ${reply.status} ${JSON.stringify(reply.body)}`,
    );
  }
  return reply.body;
}

// ------------------------------------------------------------- measuring

const mean = (samples: readonly number[]) =>
  samples.reduce((a, b) => a + b, 0) / samples.length;

interface Server {
  label: string;
  role: "agentd" | "bare";
  pid: number;
  readyMs: number;
}

interface ListTarget extends Server {
  url: string;
  bytes: number;
  get: () => Promise<void>;
}

function listTarget(server: Server, port: number, bytes: number): ListTarget {
  const url = `http://127.0.0.1:${port}/v1/agents`;
  return {
    ...server,
    url,
    bytes,
    get: async () => {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status !== 200) {
        throw new Error(`${server.label}: GET /v1/agents ${response.status}`);
      }
    },
  };
}

/** RATE_REQUESTS per target, IN_FLIGHT at a time, in RATE_ROUNDS rounds taking the targets in turn. */
function rates(
  targets: ListTarget[],
): Promise<Map<ListTarget, Throughput<"server" | "client">>> {
  return throughput(targets, {
    calls: RATE_REQUESTS,
    rounds: RATE_ROUNDS,
    inFlight: IN_FLIGHT,
    run: (target) => target.get(),
    pids: (target) => ({ server: target.pid, client: Deno.pid }),
  });
}

function printList(
  targets: ListTarget[],
  latency: Map<ListTarget, { samples: number[] }>,
  rate: Map<ListTarget, Throughput<"server" | "client">>,
): void {
  const p50 = (t: ListTarget) => percentile(latency.get(t)?.samples ?? [], 50);
  const bare = targets.find((t) => t.role === "bare");
  const agentd = targets.find((t) => t.role === "agentd");
  if (!bare || !agentd) return;
  const cpu = (value?: number) => value === undefined ? "" : value.toFixed(3);
  console.log(
    `\nGET /v1/agents (${AGENTS} agents, ${agentd.bytes} B body): ${GET_ROUNDS} requests per server ` +
      `interleaved, then ${RATE_REQUESTS} per server with ${IN_FLIGHT} in flight in ${RATE_ROUNDS} rounds ` +
      `(ratios agentd ÷ bare: above 1 is slower / more)`,
  );
  console.table(targets.map((target) => {
    const samples = latency.get(target)?.samples ?? [];
    const r = rate.get(target);
    const own = p50(target);
    return {
      server: target.label,
      "p50 ms": ms(own),
      "p99 ms": ms(percentile(samples, 99)),
      "mean ms": ms(mean(samples)),
      "p50 ÷ bare": ratio(own, p50(bare)),
      "req/s": (r?.perSecond ?? NaN).toFixed(0),
      "req/s ÷ bare": ratio(
        r?.perSecond ?? NaN,
        rate.get(bare)?.perSecond ?? NaN,
      ),
      "CPU ms/req server": cpu(r?.cpuMs.get("server")),
      "CPU ms/req client": cpu(r?.cpuMs.get("client")),
    };
  }));
  const a = rate.get(agentd)?.perSecond ?? NaN;
  const b = rate.get(bare)?.perSecond ?? NaN;
  console.log(
    `agentd: p50 ${ms(p50(agentd))} ms vs ${ms(p50(bare))} ms bare (+${
      ms(p50(agentd) - p50(bare))
    } ms, ×${ratio(p50(agentd), p50(bare))}); ${a.toFixed(0)} vs ${
      b.toFixed(0)
    } req/s (×${ratio(a, b)})`,
  );
}

// ------------------------------------------------------------------- turns

interface TurnCase {
  label: string;
  steps: ScriptStep[];
  /** The model requests agentd made in the send `record` made. */
  recorded: RecordedRequest[];
  /** Direct baseline parts of the last run: model round trips, tools/call. */
  parts: { model: number[]; tool: number[] };
  send: () => Promise<void>;
  direct: () => Promise<void>;
  /** One send, and its model requests kept for `direct` (not timed). */
  record: () => Promise<void>;
}

function turnCase(
  label: string,
  steps: ScriptStep[],
  model: BenchModel,
  sendUrl: string,
  memory: Client,
  /** One session for every send (its history grows), else a new one per send. */
  oneSession = false,
): TurnCase {
  const slug = label.replace(/\W+/g, "-");
  let session = 0;
  let checked = false;
  const toolCalls = steps.filter((s) => s.tool_calls !== undefined).length;
  // The model answers by rule (bench/model_process.ts): the mark asks for the tool step.
  const message = `Remember that the bench ran, then say so.${
    toolCalls > 0 ? ` ${TOOL_MARK}` : ""
  }`;
  const self: TurnCase = {
    label,
    steps,
    recorded: [],
    parts: { model: [], tool: [] },
    send: async () => {
      const reply = SendReply.parse(
        await post(sendUrl, {
          message,
          session_id: oneSession ? slug : `${slug}-${++session}`,
        }),
      );
      if (checked) return;
      const calls = reply.tool_calls;
      if (
        reply.stop_reason !== "end_turn" || reply.steps !== steps.length ||
        calls.length !== toolCalls || calls.some((c) => c.is_error)
      ) {
        throw new Error(
          `${label}: unexpected send reply ${JSON.stringify(reply)}`,
        );
      }
      checked = true;
    },
    record: async () => {
      await model.take();
      await self.send();
      self.recorded = await model.take();
      if (self.recorded.length !== steps.length) {
        throw new Error(
          `${label}: ${self.recorded.length} model requests, not ${steps.length}`,
        );
      }
    },
    direct: async () => {
      const recorded = self.recorded;
      for (let i = 0; i < recorded.length; i++) {
        const { body, headers } = recorded[i];
        let started = performance.now();
        const response = await fetch(`${model.url}${recorded[i].path}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: headers.authorization ?? `Bearer ${TEST_API_KEY}`,
          },
          body: JSON.stringify(body),
        });
        await response.json();
        if (response.status !== 200) {
          throw new Error(`${label}: model server ${response.status}`);
        }
        self.parts.model.push(performance.now() - started);
        if (steps[i].tool_calls === undefined) continue;
        started = performance.now();
        const result = ToolResult.parse(
          await memory.callTool({ name: TOOL, arguments: TOOL_ARGS }),
        );
        if (result.isError === true) {
          throw new Error(
            `${label}: ${TOOL} failed: ${JSON.stringify(result)}`,
          );
        }
        self.parts.tool.push(performance.now() - started);
      }
    },
  };
  return self;
}

function printTurns(
  cases: TurnCase[],
  samples: Map<() => Promise<void>, { samples: number[]; cpuMs: number }>,
): void {
  console.log(
    `\nOne agent turn: POST /v1/agents/${TOOL_AGENT}/send against the same model round trips ` +
      `and tools/call made directly, ${TURN_ROUNDS} of each interleaved (agentd CPU per turn from /proc)`,
  );
  const rows: Record<string, string>[] = [];
  for (const turn of cases) {
    const send = samples.get(turn.send);
    const direct = samples.get(turn.direct);
    if (!send || !direct) continue;
    const s50 = percentile(send.samples, 50);
    const d50 = percentile(direct.samples, 50);
    rows.push({
      turn: turn.label,
      "send p50 ms": ms(s50),
      "send p99 ms": ms(percentile(send.samples, 99)),
      "direct p50 ms": ms(d50),
      "direct p99 ms": ms(percentile(direct.samples, 99)),
      "added ms (p50)": ms(s50 - d50),
      "added ms (p95)": ms(
        percentile(send.samples, 95) - percentile(direct.samples, 95),
      ),
      "send ÷ direct": ratio(s50, d50),
      "agentd CPU ms/send": (send.cpuMs / TURN_ROUNDS).toFixed(2),
      "agentd CPU ms/direct": (direct.cpuMs / TURN_ROUNDS).toFixed(2),
    });
  }
  console.table(rows);
  for (const turn of cases) {
    const tool = turn.parts.tool.length
      ? `, tools/call p50 ${ms(percentile(turn.parts.tool, 50))} ms`
      : "";
    console.log(
      `${turn.label}: direct parts: model round trip p50 ${
        ms(percentile(turn.parts.model, 50))
      } ms (×${turn.recorded.length})${tool}; model request bodies ${
        turn.recorded.map((r) => JSON.stringify(r.body).length).join(" + ")
      } B`,
    );
  }
}

// ------------------------------------------------------------------ memory

function printMemory(title: string, servers: Server[], first: boolean): void {
  const bare = servers.find((s) => s.role === "bare");
  printMemoryTable(title, servers, {
    nameColumn: "server",
    versus: "÷ bare",
    against: (server) => server.role === "agentd" ? bare : undefined,
    first,
  });
}

// ------------------------------------------------------------------- setup

const servers: Server[] = [];
const listTargets: ListTarget[] = [];
const turns: TurnCase[] = [];
let agentdPid = NaN;

try {
  const answer: ScriptStep = { text: "Noted: the bench ran." };
  const toolStep: ScriptStep = {
    tool_calls: [{ name: `memory__${TOOL}`, arguments: TOOL_ARGS }],
  };
  const model = await spawnModel({ tool: toolStep, text: answer });
  const dir = tempDir("agentd-v1bench-");
  const config = join(dir, "agentd.json");
  Deno.writeTextFileSync(config, "{}");
  const agentd = await spawnListening("agentd serve", {
    ...agentdCommand([
      "serve",
      "--port",
      "0",
      "--data-dir",
      join(dir, "data"),
      "--config",
      config,
    ], (Deno.env.get("BENCH_V1_DENO_FLAGS") ?? "").split(" ").filter(Boolean)),
    env: {
      OPENAI_BASE_URL: `${model.url}/v1`,
      OPENAI_API_KEY: TEST_API_KEY,
    },
  });
  agentdPid = agentd.pid;
  const base = `http://127.0.0.1:${agentd.port}`;
  await post(`${base}/v1/agents`, {
    name: TOOL_AGENT,
    model: "openai/bench",
    system_prompt: "You keep notes for the bench.",
    tools: [`memory__${TOOL}`],
  });
  for (let i = 1; i < AGENTS; i++) {
    await post(`${base}/v1/agents`, {
      name: `bench-${i}`,
      model: "openai/bench",
      system_prompt: `Bench agent number ${i}.`,
    });
  }
  const listed = await json(`${base}/v1/agents`);
  const page = AgentPage.parse(listed.body);
  if (page.data.length !== AGENTS) {
    throw new Error(`agentd lists ${page.data.length} agents, not ${AGENTS}`);
  }
  const pageFile = join(dir, "page.json");
  const appFile = join(dir, "bare_hono.ts");
  Deno.writeTextFileSync(pageFile, JSON.stringify(listed.body));
  Deno.writeTextFileSync(appFile, BARE_APP);
  const bare = await spawnListening("bare Hono", {
    command: DENO,
    args: ["run", "-A", "--config", join(ROOT, "deno.json"), appFile, pageFile],
  });
  const bareListed = await json(`http://127.0.0.1:${bare.port}/v1/agents`);
  if (JSON.stringify(bareListed.body) !== JSON.stringify(listed.body)) {
    throw new Error("the bare app's body differs from agentd's");
  }
  const agentdServer: Server = {
    label: "agentd serve",
    role: "agentd",
    pid: agentd.pid,
    readyMs: agentd.readyMs,
  };
  const bareServer: Server = {
    label: "bare Hono",
    role: "bare",
    pid: bare.pid,
    readyMs: bare.readyMs,
  };
  servers.push(agentdServer, bareServer);
  listTargets.push(
    listTarget(bareServer, bare.port, bareListed.bytes),
    listTarget(agentdServer, agentd.port, listed.bytes),
  );

  const memory = new Client({ name: "agentd-bench", version: "1.0.0" });
  await memory.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp/memory`)),
  );
  const sendUrl = `${base}/v1/agents/${TOOL_AGENT}/send`;
  turns.push(
    turnCase(
      "1 tool call",
      [toolStep, answer],
      model,
      sendUrl,
      memory,
    ),
    turnCase("no tool call", [answer], model, sendUrl, memory),
    turnCase(HISTORY_LABEL, [answer], model, sendUrl, memory, true),
  );

  for (const target of TURNS_ONLY ? [] : listTargets) {
    for (let i = 0; i < GET_WARMUP; i++) await target.get();
  }
  for (const turn of turns) {
    // The one-session case first fills its history to the turn's limit.
    const warmup = turn.label === HISTORY_LABEL
      ? Math.max(TURN_WARMUP, HISTORY_MESSAGES / 2)
      : TURN_WARMUP;
    await turn.record();
    for (let i = 0; i < warmup; i++) {
      await turn.send();
      await turn.direct();
    }
    // The bodies of a send as timed (the one-session case's full history).
    await turn.record();
  }
} catch (error) {
  cleanUp();
  throw error;
}
// Runs first at clean-up (at unload), while the servers are still up.
atCleanUp(() =>
  printMemory("Memory after the benchmarks (VmRSS, VmHWM)", servers, false)
);

const load = (() => {
  try {
    return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(
      " ",
    );
  } catch {
    return "n/a";
  }
})();
console.log(
  `agentd serve vs a bare Hono app, both Deno ${Deno.version.deno}; ` +
    `client: fetch in this process; ${navigator.hardwareConcurrency} CPUs, load average ${load}`,
);
printMemory(
  `Memory after warm-up (${GET_WARMUP} GETs, ${TURN_WARMUP} sends per turn kind; VmRSS, VmHWM)`,
  servers,
  true,
);
try {
  if (!TURNS_ONLY) {
    const latency = await interleaved(listTargets, GET_ROUNDS, (t) => t.get());
    printList(listTargets, latency, await rates(listTargets));
  }
  for (const turn of turns) {
    turn.parts.model.splice(0);
    turn.parts.tool.splice(0);
  }
  const calls = turns.flatMap((t) => [t.send, t.direct]);
  printTurns(
    turns,
    await interleaved(calls, TURN_ROUNDS, (call) => call(), agentdPid),
  );
  // The MCP client's stream keeps the process alive under `deno run`.
  if (TURNS_ONLY) Deno.exit(0);
} catch (error) {
  cleanUp();
  throw error;
}

// ----------------------------------------------------------------- benches

for (const target of listTargets) {
  Deno.bench({
    name: target.label,
    group: "GET /v1/agents",
    baseline: target.role === "bare",
    n: 2000,
    warmup: 200,
    fn: async () => {
      await target.get();
    },
  });
}
for (const turn of turns) {
  Deno.bench({
    name: `direct (${turn.label})`,
    group: `agent turn, ${turn.label}`,
    baseline: true,
    n: 150,
    warmup: 10,
    fn: async () => {
      await turn.direct();
    },
  });
  Deno.bench({
    name: `agentd send (${turn.label})`,
    group: `agent turn, ${turn.label}`,
    n: 150,
    warmup: 10,
    fn: async () => {
      await turn.send();
    },
  });
}
