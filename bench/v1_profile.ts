// A CPU profile of agentd's /v1 paths in one process (node:inspector): the
// daemon (`main(["serve", ...])`, every built-in server, Deno KV in a temp
// dir), the scripted model server and the client that drives them. Prints the
// functions with the most self time, and the share of the daemon's own files.
//
//   deno run -A bench/v1_profile.ts turn [sends] [tool|text] [new|same|wide]
//   deno run -A bench/v1_profile.ts get [requests]
//
// The client's share (fetch, the model server) is in the profile too: read
// the rows by file. Timing goals stay in v1_bench.ts; this says where time goes.

import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { main } from "../main.ts";
import {
  type ScriptStep,
  startModelServer,
  TEST_API_KEY,
} from "../tests/agents/model_server.ts";
import { freePort } from "../tests/helpers.ts";
import { countKvOps, profileShares } from "./bench_lib.ts";

// `new`: each send starts a session (empty history); `same`: every send goes to
// one session (a history of agents.history_limit messages); `wide`: as `new`,
// with every built-in tool of the gateway offered to the model (32 tools).
const [what = "turn", countArg, kind = "tool", sessions = "new"] = Deno.args;

// Counts Deno KV operations (by the first parts of their keys) while profiling.
const kvOps = countKvOps((op, key, size) => {
  const name = size === undefined ? op : `${op}(${size})`;
  return Array.isArray(key) ? `${name} ${key.slice(0, 3).join("/")}` : name;
});

const count = Number(countArg ?? (what === "turn" ? 500 : 8000));
const IN_FLIGHT = 16;

const model = await startModelServer();
const dir = await Deno.makeTempDir({ prefix: "agentd-v1profile-" });
const config = join(dir, "agentd.json");
Deno.writeTextFileSync(config, "{}");
const port = freePort();
const env = {
  ...Deno.env.toObject(),
  OPENAI_BASE_URL: model.openaiBaseUrl,
  OPENAI_API_KEY: TEST_API_KEY,
  AGENTD_LOG_LEVEL: "info",
};
const daemon = main(
  [
    "serve",
    "--port",
    String(port),
    "--data-dir",
    join(dir, "data"),
    "--config",
    config,
  ],
  { env, printError: () => {} },
);
const base = `http://127.0.0.1:${port}`;
for (let i = 0;; i++) {
  try {
    await (await fetch(`${base}/health`)).arrayBuffer();
    break;
  } catch {
    if (i > 600) throw new Error("agentd did not start");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function post(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${path}: ${text}`);
}

await post("/v1/agents", {
  name: "bench-agent",
  model: "openai/bench",
  system_prompt: "You keep notes for the bench.",
  tools: sessions === "wide"
    ? ["memory", "gateway", "browser-automation"]
    : ["memory__store_memory"],
});
for (let i = 1; i < 5; i++) {
  await post("/v1/agents", {
    name: `bench-${i}`,
    model: "openai/bench",
    system_prompt: `Bench agent number ${i}.`,
  });
}

const steps: ScriptStep[] = kind === "tool"
  ? [{
    tool_calls: [{
      name: "memory__store_memory",
      arguments: {
        namespace: "bench-agent",
        key: "bench-note",
        value: "The v1 bench stored this note while timing one agent turn.",
        tags: ["bench"],
      },
    }],
  }, { text: "Stored." }]
  : [{ text: "Done." }];
let session = 0;
async function send(): Promise<void> {
  model.script(steps);
  await post("/v1/agents/bench-agent/send", {
    message: "Remember that the bench ran, then say so.",
    session_id: sessions === "same" ? "profile" : `profile-${++session}`,
  });
}
async function get(): Promise<void> {
  const response = await fetch(`${base}/v1/agents`);
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`GET ${response.status}`);
}
async function gets(n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < n) await get();
    }),
  );
}

// Warm up (JIT, caches), then profile.
if (what === "turn") { for (let i = 0; i < 50; i++) await send(); }
else await gets(1000);

/** CPU seconds of this process so far (Linux /proc, 10 ms ticks). */
function cpuSeconds(): number {
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1]
    .split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// V1_PROFILE_CPU=1: no profiler, only wall and CPU per request (for before/after runs).
if (Deno.env.get("V1_PROFILE_CPU")) {
  const cpu = cpuSeconds();
  const begun = performance.now();
  if (what === "turn") { for (let i = 0; i < count; i++) await send(); }
  else await gets(count);
  console.log(
    `${what} ${what === "turn" ? kind : ""} × ${count}: ${
      ((performance.now() - begun) / count).toFixed(3)
    } ms wall, ${
      ((cpuSeconds() - cpu) * 1000 / count).toFixed(3)
    } ms CPU each (this process: daemon, client and model server)`,
  );
  await model.close();
  Deno.kill(Deno.pid, "SIGTERM");
  await daemon;
  await Deno.remove(dir, { recursive: true });
  Deno.exit(0);
}

const session_ = new Session();
session_.connect();
await session_.post("Profiler.enable");
await session_.post("Profiler.setSamplingInterval", { interval: 100 });
await session_.post("Profiler.start");
kvOps.on = true;
const started = performance.now();
if (what === "turn") { for (let i = 0; i < count; i++) await send(); }
else await gets(count);
const wall = performance.now() - started;
kvOps.on = false;
const { profile } = await session_.post("Profiler.stop");
session_.disconnect();

const { total, byFunction, byGroup: byFile, top } = profileShares(
  profile.nodes,
  (file, name) =>
    file.startsWith("npm:")
      ? file.split("/")[0]
      : file.includes("/")
      ? file.split("/").slice(0, 2).join("/")
      : file || name,
);
console.log(
  `${what} ${
    kind === "tool" && what === "turn" ? "(1 tool call) " : ""
  }× ${count}: ${(wall / count).toFixed(3)} ms each, ${total} samples`,
);
console.table(
  [...kvOps.ops.entries()].sort((a, b) => b[1] - a[1]).map(([op, n]) => ({
    op,
    "per request": (n / count).toFixed(2),
  })),
);
console.table(top(byFile, 25));
console.table(top(byFunction, Number(Deno.env.get("V1_PROFILE_ROWS") ?? 45)));
if (Deno.env.get("V1_PROFILE_OUT")) {
  Deno.writeTextFileSync(
    Deno.env.get("V1_PROFILE_OUT") ?? "",
    JSON.stringify(profile),
  );
}
await model.close();
Deno.kill(Deno.pid, "SIGTERM");
await daemon;
await Deno.remove(dir, { recursive: true });
