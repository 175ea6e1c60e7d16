// MCP sessions under load: 200 concurrent MCP SDK clients over streamable
// HTTP against one `agentd serve` (memory and gateway), each opening a
// session, making 15 memory calls (stores and searches, half the clients
// through the gateway's /mcp), then closing its transport without DELETE,
// as most clients do. Three rounds; the first is the warm-up.
//
// Printed: calls/s, p50/p99 call latency, errors, the daemon's VmRSS after
// each round, the sessions still open (from /health), and the CPU time per
// call of the daemon and of this process (the clients): on a small machine
// they share the cores, so the sum bounds calls/s. Run the same
// bench against an older checkout with AGENTD_ROOT=/path/to/checkout to get
// the "before" row in the same conditions; BENCH_CLIENTS changes the
// number of clients, BENCH_CALLS the calls per client, BENCH_ROUNDS the
// rounds, BENCH_DAEMON_FLAGS adds `deno run` flags to the daemon.
//
//   deno run -A bench/sessions_bench.ts
//   deno task bench   (runs it as one Deno.bench)

import { join } from "node:path";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport } from "../platform/mcp_sdk.ts";
import {
  cleanUp,
  cpuMsOf,
  DENO,
  killOnExit,
  memoryOf,
  mib,
  ms,
  percentile,
  ROOT,
  tempDir,
} from "./bench_lib.ts";

const CLIENTS = Number(Deno.env.get("BENCH_CLIENTS") ?? 200);
const CALLS = Number(Deno.env.get("BENCH_CALLS") ?? 15);
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
const AGENTD_ROOT = Deno.env.get("AGENTD_ROOT") ?? ROOT;
/** Extra `deno run` flags for the daemon, e.g. `--v8-flags=--prof` for a CPU profile. */
const DAEMON_FLAGS = (Deno.env.get("BENCH_DAEMON_FLAGS") ?? "").split(" ")
  .filter((flag) => flag !== "");

const Listening = z.object({ event: z.literal("listening"), port: z.number() })
  .loose();

interface Daemon {
  url: string;
  pid: number;
  /** SIGTERM and wait for the exit, so `--cpu-prof` gets to write its profile. */
  stop(): Promise<void>;
}

async function startDaemon(): Promise<Daemon> {
  const child = new Deno.Command(DENO, {
    args: [
      "run",
      "-A",
      ...DAEMON_FLAGS,
      join(AGENTD_ROOT, "main.ts"),
      "serve",
      "--port",
      "0",
      "--data-dir",
      tempDir("agentd-sessbench-"),
      "--servers",
      "gateway,memory",
    ],
    cwd: AGENTD_ROOT,
    env: { NO_COLOR: "1", AGENTD_LOG_LEVEL: "info" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  killOnExit(child.pid);
  const reader = child.stderr.pipeThrough(new TextDecoderStream())
    .getReader();
  let buffer = "";
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue;
      }
      const listening = Listening.safeParse(parsed);
      if (listening.success) {
        // Keep draining stderr so the daemon never blocks on a full pipe.
        (async () => {
          while (!(await reader.read()).done) { /* drained */ }
        })().catch(() => {});
        return {
          url: `http://127.0.0.1:${listening.data.port}`,
          pid: child.pid,
          async stop() {
            child.kill("SIGTERM");
            await child.status;
          },
        };
      }
    }
  }
  throw new Error("agentd exited before listening");
}

const ToolResult = z.object({ isError: z.boolean().optional() }).loose();

/** One client: connect, 15 calls (stores then searches), close without DELETE. */
async function runClient(
  daemon: Daemon,
  index: number,
  round: number,
  latencies: number[],
): Promise<number> {
  const viaGateway = index % 2 === 1;
  const url = viaGateway ? `${daemon.url}/mcp` : `${daemon.url}/mcp/memory`;
  const prefix = viaGateway ? "memory__" : "";
  const client = new Client({ name: `bench-${index}`, version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  let errors = 0;
  const namespace = `bench-${index % 20}`;
  for (let call = 0; call < CALLS; call++) {
    const store = call % 3 !== 2;
    const started = performance.now();
    const result = await client.callTool(
      store
        ? {
          name: `${prefix}store_memory`,
          arguments: {
            namespace,
            key: `k-${round}-${index}-${call}`,
            value: `client ${index} note ${call}: sessions, caps and eviction`,
          },
        }
        : {
          name: `${prefix}search_memory`,
          arguments: { namespace, query: "sessions eviction", limit: 5 },
        },
    );
    latencies.push(performance.now() - started);
    if (ToolResult.parse(result).isError === true) errors++;
  }
  // Walk away: close the transport only (no DELETE).
  await client.close();
  return errors;
}

const Health = z.object({
  servers: z.record(z.string(), z.object({ sessions: z.number() }).loose()),
}).loose();

export async function run(): Promise<void> {
  const daemon = await startDaemon();
  console.log(
    `agentd at ${AGENTD_ROOT}, ${CLIENTS} clients x ${CALLS} calls, ${ROUNDS} rounds (first = warm-up)`,
  );
  console.log(
    "round | calls | errors | calls/s | p50 ms | p99 ms | RSS MiB | open sessions | CPU ms/call agentd | CPU ms/call clients",
  );
  for (let round = 1; round <= ROUNDS; round++) {
    const latencies: number[] = [];
    const daemonCpu = cpuMsOf(daemon.pid) ?? NaN;
    const clientCpu = cpuMsOf(Deno.pid) ?? NaN;
    const started = performance.now();
    const errors = await Promise.all(
      Array.from(
        { length: CLIENTS },
        (_, i) => runClient(daemon, i, round, latencies).catch(() => CALLS),
      ),
    );
    const seconds = (performance.now() - started) / 1000;
    const health = Health.parse(
      await (await fetch(`${daemon.url}/health`)).json(),
    );
    const open = Object.values(health.servers).reduce(
      (sum, server) => sum + server.sessions,
      0,
    );
    const rss = memoryOf(daemon.pid)?.rssKiB ?? NaN;
    const perCall = (cpu: number) => (cpu / latencies.length).toFixed(2);
    console.log(
      [
        round,
        latencies.length,
        errors.reduce((a, b) => a + b, 0),
        (latencies.length / seconds).toFixed(0),
        ms(percentile(latencies, 50)),
        ms(percentile(latencies, 99)),
        mib(rss),
        open,
        perCall((cpuMsOf(daemon.pid) ?? NaN) - daemonCpu),
        perCall((cpuMsOf(Deno.pid) ?? NaN) - clientCpu),
      ].join(" | "),
    );
  }
  await daemon.stop();
}

if (import.meta.main) {
  try {
    await run();
  } finally {
    cleanUp();
  }
} else {
  Deno.bench({
    name: `sessions: ${CLIENTS} concurrent clients, mixed memory calls`,
    n: 1,
    warmup: 0,
    async fn() {
      try {
        await run();
      } finally {
        cleanUp();
      }
    },
  });
}
