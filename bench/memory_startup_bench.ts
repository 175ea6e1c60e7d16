// Memory server cold start over stdio: spawn → first tools/list answer.
//
// agentd: `deno run -A main.ts mcp memory --data-dir <tmp>`. `deno run` does
// not type-check (that needs --check), and one unmeasured spawn first fills
// Deno's transpile and V8 code caches, so this is a launch with warm caches,
// like every launch after the first. A second agentd row adds
// --no-code-cache: V8 compiles every module from source, as on a first launch
// (transpiling is still cached).
// Peer: @modelcontextprotocol/server-memory (pinned in deno.json) on Node,
// with MEMORY_FILE_PATH in a temp dir.
// Both start empty: a data dir / memory file that holds no entries.
//
// The client is a raw newline-delimited JSON-RPC writer/reader (initialize,
// notifications/initialized, tools/list), so no client library cost is
// measured. The servers are started alternately, BENCH_MEMORY_STARTS (20)
// times each. The summary prints median and p95 and the ratios peer ÷
// agentd (above 1: agentd starts faster); Deno.bench adds a short second
// sample of the same thing.
//
//   deno bench -A bench/memory_startup_bench.ts

import { join } from "node:path";
import {
  agentdCommand,
  cleanUp,
  type ColdStart,
  coldStart,
  type Command,
  DENO,
  inTurn,
  ms,
  nodeVersion,
  peerCommand,
  peerVersion,
  percentile,
  ROOT,
  tempDir,
} from "./bench_lib.ts";

const STARTS = Number(Deno.env.get("BENCH_MEMORY_STARTS") ?? 20);

interface Variant {
  label: string;
  kind: "agentd" | "peer";
  command: Command;
  samples: ColdStart[];
}

const agentdDir = tempDir();
const agentdNoCacheDir = tempDir();
const peerFile = join(tempDir(), "memory.jsonl");
const variants: Variant[] = [
  {
    label: "agentd mcp memory (deno run)",
    kind: "agentd",
    command: agentdCommand(["mcp", "memory", "--data-dir", agentdDir]),
    samples: [],
  },
  {
    label: "agentd mcp memory (deno run --no-code-cache)",
    kind: "agentd",
    command: agentdCommand(
      ["mcp", "memory", "--data-dir", agentdNoCacheDir],
      ["--no-code-cache"],
    ),
    samples: [],
  },
  {
    label: "peer: server-memory (node)",
    kind: "peer",
    command: peerCommand(peerFile),
    samples: [],
  },
];
// Before and after in one run: BENCH_BEFORE=<another tree> adds its agentd
// (`git worktree add --detach /tmp/base main`).
const BEFORE = Deno.env.get("BENCH_BEFORE");
if (BEFORE) {
  variants.push({
    label: `before: agentd mcp memory (${BEFORE})`,
    kind: "agentd",
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
  });
}

try {
  for (const variant of variants) {
    const warm = await coldStart(variant.command, ROOT); // caches, secret key
    if (warm.tools === 0) throw new Error(`${variant.label}: no tools`);
  }
  for (const variant of inTurn(variants, STARTS)) {
    variant.samples.push(await coldStart(variant.command, ROOT));
  }
} catch (error) {
  cleanUp();
  throw error;
}

const peer = variants.find((v) => v.kind === "peer");
const median = (v: Variant, pick: (s: ColdStart) => number) =>
  percentile(v.samples.map(pick), 50);
const p95 = (v: Variant, pick: (s: ColdStart) => number) =>
  percentile(v.samples.map(pick), 95);
const list = (s: ColdStart) => s.toolsListMs;
const init = (s: ColdStart) => s.initializeMs;

console.log(
  `\nMemory server cold start, stdio, spawn → answer (${STARTS} starts each, ` +
    `Deno ${Deno.version.deno}, Node ${nodeVersion()}, ` +
    `@modelcontextprotocol/server-memory ${peerVersion()})`,
);
console.table(variants.map((v) => ({
  server: v.label,
  tools: v.samples[0]?.tools ?? 0,
  "initialize p50 ms": ms(median(v, init)),
  "tools/list p50 ms": ms(median(v, list)),
  "tools/list p95 ms": ms(p95(v, list)),
  "min ms": ms(Math.min(...v.samples.map(list))),
  "max ms": ms(Math.max(...v.samples.map(list))),
  // Above 1: faster than the peer.
  "peer ÷ this p50": peer
    ? (median(peer, list) / median(v, list)).toFixed(2)
    : "",
  "peer ÷ this p95": peer ? (p95(peer, list) / p95(v, list)).toFixed(2) : "",
})));

for (const variant of variants) {
  Deno.bench({
    name: variant.label,
    group: "cold start to tools/list (stdio)",
    baseline: variant.kind === "peer",
    n: 5,
    warmup: 1,
    fn: async () => {
      await coldStart(variant.command, ROOT);
    },
  });
}

// bench_lib.ts runs cleanUp (children, temp dirs) on unload.
