// agentd's MCP gateway against calling the upstream directly and against a
// named peer proxy in front of the same upstream, in one run, as ratios: the
// latency the gateway adds to a routed tools/call, and calls/s.
//
// The upstream is the MCP reference server @modelcontextprotocol/server-everything
// (pinned in deno.json) on Node; every call is its `echo` tool. The peer is
// mcp-proxy (pinned in deno.json) on Node: it serves a stdio server as
// streamable HTTP at /mcp and re-issues each request through one SDK Client
// to it, a proxy at the MCP message level as the gateway is (supergateway
// relays raw lines, and by default starts a server per request). Neither
// serves an HTTP upstream over HTTP, so the gateway is measured in front of
// both kinds of upstream:
//
//   target                  client → front         → server-everything
//   direct HTTP             HTTP                      streamableHttp
//   agentd gateway → HTTP   HTTP   gateway /mcp    → the same process, HTTP
//   Deno relay → HTTP       HTTP   bench/relay.ts  → the same process, HTTP
//   direct stdio            stdio                     stdio, this process's child
//   agentd gateway → stdio  HTTP   gateway /mcp    → stdio, the gateway's child
//   mcp-proxy → stdio       HTTP   mcp-proxy /mcp  → stdio, mcp-proxy's child
//
// Comparable pairs: gateway → HTTP with direct HTTP (what the gateway adds in
// front of an HTTP server), and gateway → stdio with mcp-proxy → stdio (the
// same hops: apples to apples). The relay passes bytes on without reading
// them (Deno.serve + fetch): the floor for any proxy on Deno in front of an
// HTTP server; what the gateway adds beyond it is its MCP work. direct stdio
// is the stdio upstream's own round trip, with no HTTP hop at all: a floor,
// not a like-for-like baseline. The gateway runs alone, `deno run -A main.ts mcp gateway --port 0 --config F`.
// Every server is a child process started once at module load; one MCP SDK
// Client per target drives it, so client-side cost is the same for all.
//
// Printed besides the bench table (Deno.bench: avg/p75/p99 per call):
//   latency  p50/p99 of calls interleaved across targets, so that other load
//            on the machine hits every target alike; the gateway's added
//            latency (p50 − direct p50, in ms and as a ratio)
//   burst    calls/s with IN_FLIGHT concurrent calls on the one client,
//            BURST_CALLS per target in BURST_ROUNDS rounds taking the targets
//            in turn; and the CPU time per call it took in the client (this
//            process), the front and the upstream (Linux /proc): on a small
//            machine all three share the cores, so CPU per call bounds calls/s
//   memory   VmRSS/VmHWM of each front process (a proxy's upstream child not
//            counted) after warm-up and after the run, gateway ÷ mcp-proxy
//
//   deno bench --allow-all bench/gateway_bench.ts

import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "../platform/mcp_sdk.ts";
import {
  agentdPort,
  callOnce,
  EVERYTHING,
  EVERYTHING_DIR,
  everythingPort,
  freePort,
  packageVersion,
  portFromOutput,
  READY_TIMEOUT_MS,
  stdioClient,
} from "./mcp_lib.ts";
import {
  agentdCommand,
  atCleanUp,
  cleanUp,
  type Command,
  descendantsOf,
  interleaved,
  killOnExit,
  MAIN,
  ms,
  nodeVersion,
  percentile,
  printMemoryTable,
  ratio,
  ROOT,
  tempDir,
  type Throughput,
  throughput,
} from "./bench_lib.ts";

const PEER_DIR = join(ROOT, "node_modules/mcp-proxy/");
const PEER = join(PEER_DIR, "dist/bin/mcp-proxy.mjs");
const WARMUP = 300;
const ROUNDS = 400;
const BURST_CALLS = 2000;
const BURST_ROUNDS = 4;
const IN_FLIGHT = 16;

type Role = "direct" | "gateway" | "peer" | "relay";
type UpstreamKind = "http" | "stdio";

interface Target {
  label: string;
  role: Role;
  upstream: UpstreamKind;
  /** The process the client talks to: the front, or the server itself. */
  pid: number;
  /** The server behind a front (found after warm-up for a stdio child). */
  upstreamPid?: number;
  /** Spawn to initialized MCP session, one sample. */
  readyMs: number;
  call: () => Promise<void>;
}

const echo = { args: { message: "bench" }, expected: "Echo: bench" };

// ---------------------------------------------------------------- spawning

/** Spawns `cmd` and reads the port it listens on from its stdout or stderr. */
async function spawnListening(
  label: string,
  cmd: Command,
  output: "stdout" | "stderr",
  match: (line: string) => number | undefined,
): Promise<{ pid: number; port: number }> {
  const child = new Deno.Command(cmd.command, {
    args: cmd.args,
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...cmd.env },
    stdin: "null",
    stdout: output === "stdout" ? "piped" : "null",
    stderr: output === "stderr" ? "piped" : "null",
  }).spawn();
  killOnExit(child.pid);
  const port = await portFromOutput(
    label,
    output === "stdout" ? child.stdout : child.stderr,
    match,
  );
  return { pid: child.pid, port };
}

/** For a server that names its port before it listens (mcp-proxy). */
async function untilAccepting(label: string, port: number): Promise<void> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (true) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch (error) {
      if (performance.now() > deadline) {
        throw new Error(`${label}: port ${port} not accepting`, {
          cause: error,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

async function httpTarget(
  label: string,
  role: Role,
  upstream: UpstreamKind,
  started: number,
  server: { pid: number; port: number },
  tool: string,
): Promise<Target> {
  const client = new Client({ name: "agentd-bench", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(`http://127.0.0.1:${server.port}/mcp`),
    ),
  );
  return {
    label,
    role,
    upstream,
    pid: server.pid,
    readyMs: performance.now() - started,
    call: callOnce(client, tool, echo.args, echo.expected),
  };
}

// Extra `deno run` flags for the gateway, e.g. a V8 profile:
// BENCH_GATEWAY_DENO_FLAGS="--v8-flags=--prof,--logfile=/tmp/gw-%p.log".
const GATEWAY_DENO_FLAGS = (Deno.env.get("BENCH_GATEWAY_DENO_FLAGS") ?? "")
  .split(" ").filter((flag) => flag !== "");
// Another checkout's main.ts for the gateway (e.g. the code before a change,
// from `git archive`), to compare two versions run after run.
const GATEWAY_MAIN = Deno.env.get("BENCH_GATEWAY_MAIN");
// `http` runs only the HTTP targets (direct, gateway, relay): a quicker run
// for the gateway's HTTP leg, with less load on a shared machine.
const STDIO = Deno.env.get("BENCH_GATEWAY_UPSTREAMS") !== "http";

/** `agentd mcp gateway` alone, with server-everything as its one upstream. */
async function gatewayTarget(
  label: string,
  upstream: UpstreamKind,
  config: Record<string, unknown>,
): Promise<Target> {
  const dir = tempDir("agentd-gwbench-");
  const configFile = join(dir, "agentd.json");
  Deno.writeTextFileSync(
    configFile,
    JSON.stringify({ gateway: { upstreams: { everything: config } } }),
  );
  const started = performance.now();
  const command = agentdCommand([
    "mcp",
    "gateway",
    "--port",
    "0",
    "--data-dir",
    dir,
    "--config",
    configFile,
  ], GATEWAY_DENO_FLAGS);
  if (GATEWAY_MAIN) {
    command.args = command.args.map((arg) => arg === MAIN ? GATEWAY_MAIN : arg);
  }
  const server = await spawnListening(label, command, "stderr", agentdPort);
  return httpTarget(
    label,
    "gateway",
    upstream,
    started,
    server,
    "everything__echo",
  );
}

// ------------------------------------------------------------- measuring

/** The processes whose CPU time per call a burst reports. */
type CpuOf = "client" | "front" | "upstream";

/**
 * BURST_CALLS calls per target, IN_FLIGHT at a time on its one client, in
 * BURST_ROUNDS rounds that take the targets in turn (as the latency rounds do).
 */
function bursts(
  targets: Target[],
): Promise<Map<Target, Throughput<CpuOf>>> {
  return throughput(targets, {
    calls: BURST_CALLS,
    rounds: BURST_ROUNDS,
    inFlight: IN_FLIGHT,
    run: (target) => target.call(),
    pids: (target) => ({
      client: Deno.pid,
      front: target.pid,
      upstream: target.upstreamPid,
    }),
  });
}

function targetOf(
  targets: Target[],
  role: Role,
  upstream: UpstreamKind,
): Target | undefined {
  return targets.find((t) => t.role === role && t.upstream === upstream);
}

function printLatency(
  targets: Target[],
  latency: Map<Target, { samples: number[] }>,
) {
  const samples = (target: Target) => latency.get(target)?.samples ?? [];
  const p50 = new Map(targets.map((t) => [t, percentile(samples(t), 50)]));
  const of = (role: Role, upstream: UpstreamKind) => {
    const found = targetOf(targets, role, upstream);
    return found ? p50.get(found) ?? NaN : NaN;
  };
  const directHttp = of("direct", "http");
  const peer = of("peer", "stdio");
  const rows = targets.map((target) => {
    const all = samples(target);
    const own = p50.get(target) ?? NaN;
    const direct = of("direct", target.upstream);
    return {
      target: target.label,
      "p50 ms": ms(own),
      "p99 ms": ms(percentile(all, 99)),
      "mean ms": ms(all.reduce((a, b) => a + b, 0) / all.length),
      "+ms vs direct, same upstream": target.role === "direct"
        ? ""
        : ms(own - direct),
      "÷ direct HTTP": ratio(own, directHttp),
      "÷ mcp-proxy": ratio(own, peer),
    };
  });
  console.log(
    `\nPer call, ${ROUNDS} calls per target interleaved (ratios of p50; below 1 is faster)`,
  );
  console.table(rows);
  const gatewayHttp = of("gateway", "http");
  const gatewayStdio = of("gateway", "stdio");
  const relay = of("relay", "http");
  console.log(
    `agentd gateway → HTTP adds ${ms(gatewayHttp - directHttp)} ms per call ` +
      `to direct HTTP (p50 ${ms(gatewayHttp)} vs ${ms(directHttp)} ms, ` +
      `×${ratio(gatewayHttp, directHttp)}); ` +
      `gateway → stdio ÷ mcp-proxy → stdio: ×${ratio(gatewayStdio, peer)}; ` +
      `the bare Deno relay adds ${ms(relay - directHttp)} ms`,
  );
}

function printBurst(
  targets: Target[],
  bursts: Map<Target, Throughput<CpuOf>>,
): void {
  const rateOf = (role: Role, upstream: UpstreamKind) => {
    const found = targetOf(targets, role, upstream);
    return found ? bursts.get(found)?.perSecond ?? NaN : NaN;
  };
  const directHttp = rateOf("direct", "http");
  const peer = rateOf("peer", "stdio");
  const cpu = (value?: number) => value === undefined ? "" : value.toFixed(2);
  console.log(
    `\nBurst: ${BURST_CALLS} calls per target in ${BURST_ROUNDS} rounds, ${IN_FLIGHT} in flight, one client per target ` +
      `(ratios of calls/s: above 1 is more; CPU ms per call by process)`,
  );
  console.table(targets.map((target) => {
    const result = bursts.get(target);
    const rate = result?.perSecond ?? NaN;
    const cpuOf = (process: CpuOf) => cpu(result?.cpuMs.get(process));
    const direct = target.role === "direct";
    return {
      target: target.label,
      "calls/s": rate.toFixed(0),
      "÷ direct HTTP": ratio(rate, directHttp),
      "÷ mcp-proxy": ratio(rate, peer),
      "CPU client": cpuOf("client"),
      "CPU front": direct ? "" : cpuOf("front"),
      "CPU upstream": cpuOf(direct ? "front" : "upstream"),
    };
  }));
}

const PROCESS: Record<string, string> = {
  "direct HTTP": "server-everything, HTTP (upstream of gateway → HTTP)",
  "direct stdio": "server-everything, stdio",
};

function printMemory(title: string, targets: Target[], first: boolean): void {
  const peer = targets.find((t) => t.role === "peer");
  printMemoryTable(title, targets, {
    nameColumn: "process",
    name: (target) => PROCESS[target.label] ?? target.label,
    versus: "÷ mcp-proxy",
    against: (target) => target.role === "gateway" ? peer : undefined,
    first,
  });
}

// ------------------------------------------------------------------- setup

const targets: Target[] = [];

try {
  let started = performance.now();
  const upstream = await spawnListening(
    "server-everything (HTTP)",
    {
      command: "node",
      args: [EVERYTHING, "streamableHttp"],
      env: { PORT: String(freePort()) },
    },
    "stderr",
    everythingPort,
  );
  targets.push(
    await httpTarget(
      "direct HTTP",
      "direct",
      "http",
      started,
      upstream,
      "echo",
    ),
    await gatewayTarget("agentd gateway → HTTP", "http", {
      url: `http://127.0.0.1:${upstream.port}/mcp`,
    }),
  );
  started = performance.now();
  const relay = await spawnListening(
    "Deno relay → HTTP",
    {
      command: Deno.execPath(),
      args: [
        "run",
        "-A",
        join(ROOT, "bench/relay.ts"),
        `http://127.0.0.1:${upstream.port}/mcp`,
      ],
    },
    "stderr",
    everythingPort,
  );
  targets.push(
    await httpTarget(
      "Deno relay → HTTP",
      "relay",
      "http",
      started,
      relay,
      "echo",
    ),
  );

  if (STDIO) {
    started = performance.now();
    const direct = await stdioClient("direct stdio", "node", [
      EVERYTHING,
      "stdio",
    ]);
    killOnExit(direct.pid);
    targets.push({
      label: "direct stdio",
      role: "direct",
      upstream: "stdio",
      pid: direct.pid,
      readyMs: performance.now() - started,
      call: callOnce(direct.client, "echo", echo.args, echo.expected),
    });
    targets.push(
      await gatewayTarget("agentd gateway → stdio", "stdio", {
        command: "node",
        args: [EVERYTHING, "stdio"],
      }),
    );

    started = performance.now();
    const peerPort = freePort();
    const peer = await spawnListening(
      "mcp-proxy",
      {
        command: "node",
        args: [
          PEER,
          "--port",
          String(peerPort),
          "--host",
          "127.0.0.1",
          "--server",
          "stream",
          "--",
          "node",
          EVERYTHING,
          "stdio",
        ],
      },
      "stdout",
      (line) => line.includes("starting server on port") ? peerPort : undefined,
    );
    await untilAccepting("mcp-proxy", peer.port);
    targets.push(
      await httpTarget(
        "mcp-proxy → stdio",
        "peer",
        "stdio",
        started,
        peer,
        "echo",
      ),
    );
  }

  for (const target of targets) {
    for (let i = 0; i < WARMUP; i++) await target.call();
    if (target.role !== "direct" && target.upstream === "http") {
      target.upstreamPid = upstream.pid;
    } else if (target.role !== "direct") {
      target.upstreamPid = descendantsOf(target.pid)[0];
    }
  }
} catch (error) {
  cleanUp();
  throw error;
}
// Runs first at clean-up (at unload), while the servers are still up.
atCleanUp(() =>
  printMemory("Memory after the benchmarks (VmRSS, VmHWM)", targets, false)
);

console.log(
  `agentd gateway (Deno ${Deno.version.deno}) vs mcp-proxy ${
    packageVersion(PEER_DIR)
  } (Node ${nodeVersion()}); upstream @modelcontextprotocol/server-everything ` +
    `${
      packageVersion(EVERYTHING_DIR)
    } (Node); client: MCP SDK Client in this process` +
    (GATEWAY_MAIN ? `; gateway from ${GATEWAY_MAIN}` : ""),
);
printMemory(
  `Memory after ${WARMUP} warm-up calls each (VmRSS, VmHWM)`,
  targets,
  true,
);
try {
  printLatency(
    targets,
    await interleaved(targets, ROUNDS, (target) => target.call()),
  );
  printBurst(targets, await bursts(targets));
} catch (error) {
  cleanUp();
  throw error;
}

// ----------------------------------------------------------------- benches

for (const upstream of ["http", "stdio"] satisfies UpstreamKind[]) {
  for (const target of targets) {
    if (target.upstream !== upstream) continue;
    Deno.bench({
      name: target.label,
      group: `tools/call, ${upstream} upstream`,
      baseline: upstream === "http"
        ? target.role === "direct"
        : target.role === "peer",
      n: 1000,
      warmup: 100,
      fn: async () => {
        await target.call();
      },
    });
  }
}
