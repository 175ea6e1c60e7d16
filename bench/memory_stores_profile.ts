// A CPU profile (node:inspector) of the memory server's own write path:
// MemoryService.store on a KV file with N writes in flight, as
// bench/memory_stores_bench.ts's in-process row runs it (no MCP, no kit).
// Prints CPU per store (this process, all threads: the KV thread included),
// the Deno KV calls per store, and the functions and files with the most
// self time of the main thread. In flight 1: one writer waiting for each
// answer (no batching), as one MCP client calling tools one at a time.
//
//   deno run -A bench/memory_stores_profile.ts [stores] [in flight] [store|untagged|turn]
//
// `untagged`: store_memory without `tags` (the entry's tags are kept), as
// clients often call it.
// `turn`: an agent turn instead of a store, as the agent loop makes it: the
// session's history (20 messages), then store_conversation of the user
// message and the answer; each writer has its own session.
//
// MEMORY_PROFILE_CPU=1: no profiler, only CPU per store (for before/after runs).

import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { openKvStore } from "../platform/store/kv.ts";
import { KvBackend } from "../tools/memory/backends/kv.ts";
import {
  cleanUp,
  countKvOps,
  type EntryInput,
  fillerEntry,
  memoryService,
  profileShares,
  seeded,
  tempDir,
} from "./bench_lib.ts";

const count = Number(Deno.args[0] ?? 4000);
const lanes = Number(Deno.args[1] ?? 32);
const turns = Deno.args[2] === "turn";
const untagged = Deno.args[2] === "untagged";

// Deno KV calls per store, by kind.
const kvOps = countKvOps();

function entries(n: number, seed: number): EntryInput[] {
  const random = seeded(seed);
  return Array.from({ length: n }, (_, i) => fillerEntry(random, i));
}

/** CPU ms of this process so far (Linux /proc, 10 ms ticks). */
function cpuMs(): number {
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1]
    .split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU ms per thread of this process (Linux /proc/self/task), by thread name. */
function threadCpuMs(): Map<string, number> {
  const out = new Map<string, number>();
  for (const task of Deno.readDirSync("/proc/self/task")) {
    try {
      const stat = Deno.readTextFileSync(`/proc/self/task/${task.name}/stat`);
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const label = task.name === String(Deno.pid) ? "main" : name;
      for (const [kind, field] of [["user", 11], ["sys", 12]] as const) {
        const ms = Number(fields[field]) * 10;
        const id = `${label} ${kind}`;
        out.set(id, (out.get(id) ?? 0) + ms);
      }
    } catch {
      // the thread ended
    }
  }
  return out;
}

const kv = await openKvStore(join(tempDir(), "store.kv"));
const backend = await KvBackend.open(kv);
const memory = await memoryService(backend);

async function run(items: EntryInput[]): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async (_, lane) => {
    while (next < items.length) {
      const item = items[next++];
      if (!turns) {
        const { tags, ...rest } = item;
        await memory.store({}, untagged ? rest : { ...rest, tags });
        continue;
      }
      const session = `${item.key.startsWith("warm-") ? "warm" : "s"}-${lane}`;
      await memory.history({}, session, 20);
      await memory.storeConversation({}, session, [
        { role: "user", content: item.value.slice(0, 200) },
        { role: "assistant", content: item.value },
      ]);
    }
  }));
}

// Warm up (JIT), on other keys.
await run(entries(1000, 7).map((e) => ({ ...e, key: `warm-${e.key}` })));
const items = entries(count, 4242);

const profiling = !Deno.env.get("MEMORY_PROFILE_CPU");
const session = new Session();
if (profiling) {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
}
kvOps.on = true;
const cpu = cpuMs();
const threads = threadCpuMs();
const started = performance.now();
await run(items);
const wall = performance.now() - started;
const used = cpuMs() - cpu;
kvOps.on = false;
console.log(
  `MemoryService.${
    turns
      ? "history + storeConversation"
      : untagged
      ? "store (no tags)"
      : "store"
  } × ${count}, ${lanes} in flight: ${
    Math.round(count / wall * 1000)
  } stores/s, ${Math.round(used / count * 1000)} µs CPU per store`,
);
console.table(
  [...threadCpuMs()].map(([thread, ms]) => ({
    thread,
    "CPU µs/store": Math.round(
      (ms - (threads.get(thread) ?? 0)) / count * 1000,
    ),
  })).filter((row) => row["CPU µs/store"] > 0),
);
console.table(
  [...kvOps.ops.entries()].map(([op, n]) => ({
    op,
    "per store": (n / count).toFixed(3),
  })),
);

if (profiling) {
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  const { total, byFunction, byGroup: byFile, top } = profileShares(
    profile.nodes,
  );
  console.log(`${total} samples`);
  console.table(top(byFile, 30));
  console.table(
    top(byFunction, Number(Deno.env.get("MEMORY_PROFILE_ROWS") ?? 45)),
  );
}
await backend.close();
cleanUp();
