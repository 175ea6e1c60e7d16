// Cold start as a desktop client sees it: spawn → initialize → tools/list
// with the MCP SDK's stdio client (Client + StdioClientTransport), the way
// Claude Desktop or VS Code start a server. One run, alternating:
//   agentd:  deno run -A main.ts mcp memory --data-dir <tmp>
//   peer:    node @modelcontextprotocol/server-memory (pinned in deno.json)
//   floor:   a one-tool Deno server on the same SDK (what Deno + the SDK cost)
//   bound:   bench/listing_front.ts, memory's generated listings answered by a
//            process that loads nothing else (what a stdio front answering
//            initialize and tools/list before the SDK loads could reach)
// The first start of each is not counted (it fills Deno's transpile and V8
// code caches and writes agentd's secret key). Prints p50/p95 and the ratio
// agentd ÷ peer (goal ≤ 0.6). On Linux it also prints the whole-process CPU
// (user + sys, from /usr/bin/time) of a start that reads EOF on stdin and
// exits, and of a start that answers initialize and tools/list first (what a
// desktop client's start costs): steadier than wall time on a loaded machine.
//
//   deno run -A bench/cold_start_bench.ts        (BENCH_STARTS, default 15)

import { join } from "node:path";
import { Client } from "../platform/mcp_sdk.ts";
import { StdioClientTransport } from "../platform/mcp_sdk_stdio_client.ts";
import {
  agentdCommand,
  cleanUp,
  type Command,
  DENO,
  inTurn,
  ms,
  peerCommand,
  percentile,
  ROOT,
  tempDir,
} from "./bench_lib.ts";

const STARTS = Number(Deno.env.get("BENCH_STARTS") ?? 15);

const FLOOR = join(ROOT, "bench/one_tool_server.ts");
const FRONT = join(ROOT, "bench/listing_front.ts");

interface Variant {
  label: string;
  command: Command;
  samples: number[];
  tools: number;
  /** Seconds of CPU (user + sys) per start, whole process. */
  cpu: number[];
  /** The same for a start that answers initialize and tools/list first. */
  listedCpu: number[];
}

const variants: Variant[] = [
  {
    label: "agentd mcp memory",
    command: agentdCommand(["mcp", "memory", "--data-dir", tempDir()]),
    samples: [],
    tools: 0,
    cpu: [],
    listedCpu: [],
  },
  {
    label: "peer: server-memory (node)",
    command: peerCommand(join(tempDir(), "memory.jsonl")),
    samples: [],
    tools: 0,
    cpu: [],
    listedCpu: [],
  },
  {
    label: "floor: one-tool Deno + SDK server",
    command: { command: DENO, args: ["run", "-A", FLOOR] },
    samples: [],
    tools: 0,
    cpu: [],
    listedCpu: [],
  },
  {
    label: "bound: memory's listings, nothing else loaded",
    command: { command: DENO, args: ["run", "-A", FRONT] },
    samples: [],
    tools: 0,
    cpu: [],
    listedCpu: [],
  },
];

// Before and after in one run: BENCH_BEFORE=<another tree> adds its agentd
// (`git worktree add --detach /tmp/base main`); the stdio front off
// (AGENTD_STDIO_FRONT=off) is this tree without cli/stdio_front.ts answering.
const BEFORE = Deno.env.get("BENCH_BEFORE");
const more: Variant[] = [
  {
    label: "agentd, stdio front off",
    command: {
      ...agentdCommand(["mcp", "memory", "--data-dir", tempDir()]),
      env: { AGENTD_STDIO_FRONT: "off" },
    },
    samples: [],
    tools: 0,
    cpu: [],
    listedCpu: [],
  },
];
if (BEFORE) {
  more.push({
    label: `before: agentd mcp memory (${BEFORE})`,
    command: {
      command: DENO,
      args: [
        "run",
        "-A",
        "--config",
        join(BEFORE, "deno.json"),
        join(BEFORE, "main.ts"),
        "mcp",
        "memory",
        "--data-dir",
        tempDir(),
      ],
    },
    samples: [],
    tools: 0,
    cpu: [],
    listedCpu: [],
  });
}
variants.push(...more);

/** Milliseconds from spawn to the tools/list answer, and the tool count. */
async function start(command: Command): Promise<[number, number]> {
  const began = performance.now();
  const transport = new StdioClientTransport({
    command: command.command,
    args: command.args,
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...command.env },
    stderr: "ignore",
  });
  const client = new Client({ name: "agentd-bench", version: "1.0.0" });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    return [performance.now() - began, tools.length];
  } finally {
    await client.close();
  }
}

const CPU_STARTS = Number(Deno.env.get("BENCH_CPU_STARTS") ?? 8);
const TIME = "/usr/bin/time";

/** User + sys seconds of one start that reads EOF and exits, or undefined without /usr/bin/time. */
async function cpuOfStart(command: Command): Promise<number | undefined> {
  try {
    await Deno.stat(TIME);
  } catch {
    return undefined;
  }
  const out = await new Deno.Command(TIME, {
    args: ["-f", "cpu %U %S", command.command, ...command.args],
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...command.env },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const match = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(
    new TextDecoder().decode(out.stderr),
  );
  return match ? Number(match[1]) + Number(match[2]) : undefined;
}

/**
 * User + sys seconds of a start driven as `start` does (initialize,
 * tools/list, stdin closed): what a desktop client's start costs the machine.
 */
async function cpuOfListedStart(command: Command): Promise<number | undefined> {
  try {
    await Deno.stat(TIME);
  } catch {
    return undefined;
  }
  const transport = new StdioClientTransport({
    command: TIME,
    args: ["-f", "cpu %U %S", command.command, ...command.args],
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...command.env },
    stderr: "pipe",
  });
  const stderr: string[] = [];
  const ended = new Promise<void>((resolve) => {
    transport.stderr?.on("data", (chunk) => stderr.push(String(chunk)));
    transport.stderr?.on("end", () => resolve());
  });
  const client = new Client({ name: "agentd-bench", version: "1.0.0" });
  try {
    await client.connect(transport);
    await client.listTools();
  } finally {
    await client.close();
  }
  await ended;
  const match = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(stderr.join(""));
  return match ? Number(match[1]) + Number(match[2]) : undefined;
}

try {
  for (const variant of variants) {
    const [, tools] = await start(variant.command);
    if (tools === 0) throw new Error(`${variant.label}: no tools`);
    variant.tools = tools;
  }
  for (const variant of inTurn(variants, STARTS)) {
    variant.samples.push((await start(variant.command))[0]);
  }
  for (const variant of inTurn(variants, CPU_STARTS)) {
    const seconds = await cpuOfStart(variant.command);
    if (seconds !== undefined) variant.cpu.push(seconds);
  }
  for (const variant of inTurn(variants, CPU_STARTS)) {
    const seconds = await cpuOfListedStart(variant.command);
    if (seconds !== undefined) variant.listedCpu.push(seconds);
  }
} finally {
  cleanUp();
}

const p50 = (v: Variant) => percentile(v.samples, 50);
const peer = variants[1];
console.log(
  `\nspawn → tools/list, MCP SDK stdio client, ${STARTS} starts each, Deno ${Deno.version.deno}`,
);
console.table(variants.map((v) => ({
  server: v.label,
  tools: v.tools,
  "p50 ms": ms(p50(v)),
  "p95 ms": ms(percentile(v.samples, 95)),
  "min ms": ms(Math.min(...v.samples)),
  // Below 1: faster than the node peer.
  "÷ peer p50": (p50(v) / p50(peer)).toFixed(2),
  "CPU s, median": v.cpu.length ? percentile(v.cpu, 50).toFixed(2) : "n/a",
  "CPU ÷ peer": v.cpu.length && peer.cpu.length
    ? (percentile(v.cpu, 50) / percentile(peer.cpu, 50)).toFixed(2)
    : "n/a",
  "CPU s with tools/list": v.listedCpu.length
    ? percentile(v.listedCpu, 50).toFixed(2)
    : "n/a",
  "÷ peer": v.listedCpu.length && peer.listedCpu.length
    ? (percentile(v.listedCpu, 50) / percentile(peer.listedCpu, 50)).toFixed(2)
    : "n/a",
})));
