// A CPU profile of `agentd mcp gateway` in front of an HTTP upstream
// (server-everything's streamable HTTP on Node, as bench/gateway_bench.ts's
// "gateway → HTTP"): an SDK client makes N `everything__echo` calls through
// the gateway, IN_FLIGHT at a time; the gateway runs with --inspect and this
// script takes the profile over the inspector, so the client's and the
// upstream's work is not in it. Prints the gateway's CPU per call (all
// threads, from /proc) beside the upstream's and the client's, and the files
// and functions with the most self time.
//
//   deno run -A bench/gateway_profile.ts [calls] [in flight]
//
// GATEWAY_PROFILE_OUT=FILE: the raw profile (`Profiler.stop`'s answer) too.
// The inspector adds work to every fetch (Deno's network events for the
// inspector, a tee of each response body): about a fifth of the samples;
// GATEWAY_PROFILE_FLAGS (below) profiles without it.
// GATEWAY_PROFILE_CPU=1: no profiler, only CPU per call, in ROUNDS rounds
// that alternate this checkout's gateway with GATEWAY_PROFILE_BASE's main.ts
// (when set; e.g. a `git worktree add --detach` of the code before a change),
// each against the same upstream process, and the direct call as the peer.

import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "../platform/mcp_sdk.ts";
import {
  agentdPort,
  callOnce,
  EVERYTHING,
  everythingPort,
  freePort,
  portFromOutput,
} from "./mcp_lib.ts";
import {
  agentdCommand,
  cleanUp,
  cpuMsOrThrow,
  inspector,
  killOnExit,
  MAIN,
  printShares,
  ROOT,
  stopProfile,
  tempDir,
} from "./bench_lib.ts";

const calls = Number(Deno.args[0] ?? 4000);
const inFlight = Number(Deno.args[1] ?? 16);
const cpuOnly = Deno.env.get("GATEWAY_PROFILE_CPU") === "1";
const base = Deno.env.get("GATEWAY_PROFILE_BASE");
const rounds = Number(Deno.env.get("GATEWAY_PROFILE_ROUNDS") ?? 3);
// Extra `deno run` flags for the gateways in that mode, e.g. V8's own
// profiler, which (unlike --inspect) adds no network events to each fetch:
// "--v8-flags=--prof,--logfile=/tmp/gw-%p.log,--no-logfile-per-isolate",
// then `node --prof-process /tmp/gw-<pid>.log`.
const FLAGS = (Deno.env.get("GATEWAY_PROFILE_FLAGS") ?? "").split(" ")
  .filter((flag) => flag !== "");

async function spawn(
  label: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  match: (line: string) => number | undefined,
): Promise<{ pid: number; port: number; child: Deno.ChildProcess }> {
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  killOnExit(child.pid);
  const port = await portFromOutput(label, child.stderr, match);
  return { pid: child.pid, port, child };
}

async function clientOf(port: number): Promise<Client> {
  const client = new Client({ name: "agentd-bench", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)),
  );
  return client;
}

async function gateway(
  upstreamPort: number,
  main: string,
  flags: string[],
): Promise<{ pid: number; port: number; child: Deno.ChildProcess }> {
  const dir = tempDir("agentd-gwprofile-");
  const config = join(dir, "agentd.json");
  Deno.writeTextFileSync(
    config,
    JSON.stringify({
      gateway: {
        upstreams: {
          everything: { url: `http://127.0.0.1:${upstreamPort}/mcp` },
        },
      },
    }),
  );
  const command = agentdCommand([
    "mcp",
    "gateway",
    "--port",
    "0",
    "--data-dir",
    dir,
    "--config",
    config,
  ], flags);
  return await spawn(
    "gateway",
    command.command,
    command.args.map((arg) => arg === MAIN ? main : arg),
    {},
    agentdPort,
  );
}

/** `count` calls, `inFlight` at a time; CPU ms per call of each pid. */
async function run(
  call: () => Promise<void>,
  count: number,
  pids: Record<string, number>,
): Promise<Record<string, number>> {
  const before = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => [name, cpuMsOrThrow(pid)]),
  );
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < count) await call();
    }),
  );
  return Object.fromEntries(
    Object.entries(pids).map((
      [name, pid],
    ) => [name, (cpuMsOrThrow(pid) - before[name]) / count]),
  );
}

const upstream = await spawn(
  "server-everything",
  "node",
  [EVERYTHING, "streamableHttp"],
  { PORT: String(freePort()) },
  everythingPort,
);
const direct = callOnce(
  await clientOf(upstream.port),
  "echo",
  { message: "bench" },
  "Echo: bench",
);

try {
  if (cpuOnly) {
    const fronts = [{ label: "gateway", main: MAIN }];
    if (base) fronts.push({ label: "base", main: base });
    const started = await Promise.all(fronts.map(async (front) => {
      const server = await gateway(upstream.port, front.main, FLAGS);
      const call = callOnce(
        await clientOf(server.port),
        "everything__echo",
        { message: "bench" },
        "Echo: bench",
      );
      for (let i = 0; i < 300; i++) await call();
      return { ...front, pid: server.pid, call };
    }));
    for (let i = 0; i < 300; i++) await direct();
    const load = () => Deno.loadavg().map((n) => n.toFixed(1)).join(" ");
    console.log(
      `${calls} calls per target per round, ${inFlight} in flight; CPU ms per call; load ${load()}`,
    );
    const rows = [];
    for (let round = 0; round < rounds; round++) {
      for (const front of started) {
        const cpu = await run(front.call, calls, {
          client: Deno.pid,
          front: front.pid,
          upstream: upstream.pid,
        });
        rows.push({ round, target: front.label, ...fix(cpu) });
      }
      const cpu = await run(direct, calls, {
        client: Deno.pid,
        upstream: upstream.pid,
      });
      rows.push({ round, target: "direct", ...fix(cpu) });
    }
    console.table(rows);
    console.log(`load ${load()}`);
  } else {
    const inspectPort = freePort();
    const server = await gateway(upstream.port, base ?? MAIN, [
      `--inspect=127.0.0.1:${inspectPort}`,
    ]);
    const call = callOnce(
      await clientOf(server.port),
      "everything__echo",
      { message: "bench" },
      "Echo: bench",
    );
    for (let i = 0; i < 500; i++) await call();
    const cdp = await inspector(inspectPort);
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
    await cdp.send("Profiler.start");
    const cpu = await run(call, calls, {
      client: Deno.pid,
      front: server.pid,
      upstream: upstream.pid,
    });
    const { nodes, raw } = await stopProfile(cdp);
    const out = Deno.env.get("GATEWAY_PROFILE_OUT");
    if (out) Deno.writeTextFileSync(out, JSON.stringify(raw));
    console.log(
      `${calls} calls, ${inFlight} in flight (profiling): CPU ms per call`,
      fix(cpu),
    );
    printShares(nodes);
    cdp.close();
  }
} finally {
  cleanUp();
}
Deno.exit(0);

function fix(cpu: Record<string, number>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(cpu).map(([name, ms]) => [name, ms.toFixed(3)]),
  );
}
