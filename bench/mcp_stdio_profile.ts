// A CPU profile of `agentd mcp memory`'s main thread while one SDK client
// over stdio keeps L `store_memory` calls in flight (as
// bench/memory_stores_bench.ts's `stdio32` row): the server runs with
// --inspect and this script takes the profile over the inspector's
// WebSocket. Prints the server's CPU per store (all threads, from /proc),
// then the files and functions with the most self time and the functions
// with the most inclusive time (samples with the function on the stack).
//
//   deno run -A bench/mcp_stdio_profile.ts [stores] [in flight]
//
// STDIO_PROFILE_CPU=1: no profiler, only CPU per store. STDIO_PROFILE_OUT=file
// also writes the profile (Profiler.stop's result) there as JSON.

import { freePort } from "../tests/helpers.ts";
import {
  agentdCommand,
  type CdpProfileNode,
  cleanUp,
  cpuMsOrThrow,
  fillerEntry,
  inspector,
  printShares,
  ROOT,
  seeded,
  stdioClient,
  stopProfile,
  tempDir,
} from "./bench_lib.ts";

const count = Number(Deno.args[0] ?? 6000);
const lanes = Number(Deno.args[1] ?? 32);
const profiling = Deno.env.get("STDIO_PROFILE_CPU") !== "1";

const inspectPort = freePort();
const command = agentdCommand(
  ["mcp", "memory", "--data-dir", tempDir()],
  profiling ? [`--inspect=127.0.0.1:${inspectPort}`] : [],
);
const { client, pid } = await stdioClient(command);
if (pid === null) throw new Error("no server pid");

async function store(from: number, to: number): Promise<void> {
  let next = from;
  const random = seeded(4242 + from);
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < to) {
      const i = next++;
      const entry = fillerEntry(random, i);
      const result = await client.callTool({
        name: "store_memory",
        arguments: { ...entry },
      });
      if (result.isError === true) throw new Error(JSON.stringify(result));
    }
  }));
}

// Warm up: compile the paths before the profile.
await store(0, 500);
const cdp = profiling ? await inspector(inspectPort) : undefined;
await cdp?.send("Profiler.enable");
await cdp?.send("Profiler.setSamplingInterval", { interval: 200 });
await cdp?.send("Profiler.start");

const before = cpuMsOrThrow(pid);
const started = performance.now();
await store(500, 500 + count);
const elapsed = performance.now() - started;
const used = cpuMsOrThrow(pid) - before;
console.log(
  `${count} stores, ${lanes} in flight: ${
    Math.round(count / elapsed * 1000)
  }/s, server CPU ${Math.round(used / count * 1000)} µs/store`,
);

if (cdp) {
  const { nodes, raw } = await stopProfile(cdp);
  const out = Deno.env.get("STDIO_PROFILE_OUT");
  if (out) Deno.writeTextFileSync(out, JSON.stringify(raw));
  const shares = printShares(nodes);
  // Inclusive: each sample counted once per function on its stack.
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const keyOf = (node: CdpProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(`file://${ROOT}`, "").replace(
      /^.*node_modules\/\.deno\//,
      "npm:",
    );
    return `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
  };
  const inclusive = new Map<string, number>();
  for (const node of nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const seen = new Set<string>();
    for (
      let at: CdpProfileNode | undefined = node;
      at;
      at = byId.get(parent.get(at.id) ?? -1)
    ) {
      const key = keyOf(at);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + hits);
    }
  }
  console.table(shares.top(inclusive, 70));
  cdp.close();
}
await client.close();
cleanUp();
