// Memory server write throughput: store_memory calls per second on an empty
// store, against @modelcontextprotocol/server-memory's create_entities.
//
//   in process, 64 in flight      MemoryService.store on a KV file, no MCP:
//                                 the ceiling of the server's own work
//   stdio, 1 client, sequential   one call at a time (each waits for its answer)
//   stdio, 1 client, N in flight  one MCP connection with N calls outstanding
//                                 (N = 4, 16, 32, 64, 128; 4 and 16 are the
//                                 HTTP rows' concurrency without HTTP)
//   HTTP, 1 client                one streamable HTTP session on `agentd serve`,
//                                 sequential: the peer of the concurrent rows
//   HTTP, 4 clients               4 streamable HTTP sessions on `agentd serve`,
//                                 each sequential
//   HTTP, 16 clients              the same with 16 sessions
//   peer, stdio, sequential       create_entities, one entity per call
//   import, stdio, sequential     import_memories, 100 entries per call, one
//                                 call at a time: a client that has many
//                                 entries at once batches them instead of
//                                 waiting for a commit per entry
//   peer, batches of 100          create_entities, 100 entities per call
//   floor: KV commit              a bare Deno KV atomic commit (an entry-sized
//                                 value and a counter), one at a time, in the
//                                 same temp dir: what one durable write costs
//                                 on this disk before any work of ours
//   floor: KV commit after 1 ms   the same commit, each after 1 ms with the
//                                 thread blocked (as between a client's calls)
//   floor: stdio call             a no-op tools/call (bench/stdio_ping_server.ts
//                                 on the kit's stdio transport), sequential:
//                                 the MCP round trip before any tool work
//   A client waiting for each answer cannot go faster than one commit plus one
//   round trip: the two floor rows bound the sequential rows. The KV floor's
//   commits follow each other; a commit after a pause (as between two calls)
//   costs up to twice as much: bench/kv_commit_floor.ts.
//
// Every answer of agentd comes after its write is committed to the KV file
// (SQLite, WAL); concurrent calls share commits (group commit in KvBackend).
// "CPU µs/store" is the CPU time (user + system, all threads) the server
// process spent per store during the run, read from /proc (Linux): unlike
// stores/s it barely moves with other load on the machine. 2,000 stores/s
// needs at most 500 µs per store on one core.
// BENCH_MEMORY_RUNS=N repeats the whole set (default 1); the README reports
// the range over runs. BENCH_MEMORY_ROWS picks rows by name (comma-separated:
// inproc, stdio1, stdio4, stdio16, stdio32, stdio64, stdio128, http1, http4,
// http16, peer, import, peerbatch, kvfloor, kvpaused, callfloor; stdio4 and
// stdio16 run only when named)
// and BENCH_MEMORY_STORES sets the writes per row (default 2,000). HTTP rows
// also report the bench's own client CPU: it shares the machine's cores.
// BENCH_MEMORY_THREADS=1 adds the stdio server's CPU per store by thread
// (main: JavaScript; sw-0: Deno KV's SQLite thread; V8 workers: GC, compiling).
// BENCH_MEMORY_DENO_FLAGS adds Deno flags to the stdio server (space-separated,
// e.g. "--v8-flags=--prof" for a V8 tick profile of the server).
// BENCH_MEMORY_WARMUP=N makes N stores (other keys, same lanes) on each stdio
// store row's server before its measured stores: without it a 2,000-store row
// includes the server's JIT warm-up (about 100 µs of CPU per store with 32 in
// flight, mostly V8's compiler threads; 2026-11-27). Only the stdio store rows
// are warmed: compare them with the HTTP and floor rows of a run without it.
//
//   deno run -A bench/memory_stores_bench.ts

import { join } from "node:path";
import { z } from "zod";
import type { Client } from "../platform/mcp_sdk.ts";
import { openKvStore } from "../platform/store/kv.ts";
import { KvBackend } from "../tools/memory/backends/kv.ts";
import {
  agentdCommand,
  cleanUp,
  type EntryInput,
  fillerEntry,
  memoryServeClients,
  memoryService,
  ms,
  nodeVersion,
  peerCommand,
  peerVersion,
  percentile,
  ROOT,
  seeded,
  stdioClient,
  tempDir,
} from "./bench_lib.ts";

const STORES = Number(Deno.env.get("BENCH_MEMORY_STORES") ?? "2000");
const RUNS = Number(Deno.env.get("BENCH_MEMORY_RUNS") ?? "1");
const ROWS = Deno.env.get("BENCH_MEMORY_ROWS")?.split(",");
/** Rows left out unless BENCH_MEMORY_ROWS names them (the default set stays as before). */
const OPT_IN = new Set(["stdio4", "stdio16"]);
const WARMUP = Number(Deno.env.get("BENCH_MEMORY_WARMUP") ?? "0");
if (!Number.isSafeInteger(WARMUP) || WARMUP < 0) {
  throw new Error("BENCH_MEMORY_WARMUP must be a whole number of stores");
}
const DENO_FLAGS = Deno.env.get("BENCH_MEMORY_DENO_FLAGS")?.split(" ")
  .filter((flag) => flag !== "") ?? [];

const ToolResult = z.object({
  isError: z.boolean().optional(),
}).loose();

interface Result {
  label: string;
  count: number;
  ms: number;
  samples: number[];
  /** CPU ms the server process spent during the run, when known. */
  cpuMs?: number;
  /** CPU ms the bench's own clients spent (HTTP rows: they share the 2 cores). */
  clientCpuMs?: number;
  /** CPU ms of the server by thread (BENCH_MEMORY_THREADS=1, stdio rows). */
  threadMs?: Map<string, number>;
}

const THREADS = Deno.env.get("BENCH_MEMORY_THREADS") === "1";

/** CPU ms per thread of a process (Linux /proc/PID/task), by thread name; the main thread is "main". */
function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
      try {
        const stat = Deno.readTextFileSync(
          `/proc/${pid}/task/${task.name}/stat`,
        );
        const name = task.name === String(pid)
          ? "main"
          : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const ms = (Number(fields[11]) + Number(fields[12])) * 10;
        out.set(name, (out.get(name) ?? 0) + ms);
      } catch {
        // the thread ended
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

function threadsSpent(
  pid: number,
  from: Map<string, number>,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, ms] of threadCpuMs(pid)) {
    out.set(name, ms - (from.get(name) ?? 0));
  }
  return out;
}

/** CPU time (user + system, all threads) of a process so far, in ms; undefined off Linux. */
function cpuMs(pid: number | "self"): number | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 per second).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

function spent(pid: number | "self", from: number | undefined) {
  const to = cpuMs(pid);
  return from === undefined || to === undefined ? undefined : to - from;
}

function entries(count: number, seed: number): EntryInput[] {
  const random = seeded(seed);
  return Array.from({ length: count }, (_, i) => fillerEntry(random, i));
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<void> {
  const result = ToolResult.parse(
    await client.callTool({ name, arguments: args }),
  );
  if (result.isError === true) {
    throw new Error(`${name}: ${JSON.stringify(result).slice(0, 500)}`);
  }
}

/** Runs `fn` over `items` with `lanes` calls outstanding; returns each call's ms. */
async function drive<T>(
  items: readonly T[],
  lanes: number,
  fn: (item: T) => Promise<void>,
): Promise<number[]> {
  const samples: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < items.length) {
      const item = items[next++];
      const started = performance.now();
      await fn(item);
      samples.push(performance.now() - started);
    }
  }));
  return samples;
}

async function storesInProcess(lanes: number): Promise<Result> {
  const kv = await openKvStore(join(tempDir(), "store.kv"));
  const backend = await KvBackend.open(kv);
  const memory = await memoryService(backend);
  const items = entries(STORES, 4242);
  const cpu = cpuMs("self");
  const started = performance.now();
  const samples = await drive(items, lanes, async (entry) => {
    await memory.store({}, entry);
  });
  const elapsed = performance.now() - started;
  const used = spent("self", cpu);
  await backend.close();
  return {
    label: `agentd MemoryService.store, in process, ${lanes} in flight`,
    count: items.length,
    ms: elapsed,
    samples,
    cpuMs: used,
  };
}

async function storesStdio(lanes: number): Promise<Result> {
  const { client, pid } = await stdioClient(
    agentdCommand(["mcp", "memory", "--data-dir", tempDir()], DENO_FLAGS),
  );
  const items = entries(STORES, 4242);
  if (WARMUP > 0) {
    const warm = entries(WARMUP, 4343).map((entry) => ({
      ...entry,
      key: `warm-${entry.key}`,
    }));
    await drive(warm, lanes, async (entry) => {
      await call(client, "store_memory", { ...entry });
    });
  }
  const cpu = pid === null ? undefined : cpuMs(pid);
  const threads = pid === null || !THREADS ? undefined : threadCpuMs(pid);
  const started = performance.now();
  const samples = await drive(items, lanes, async (entry) => {
    await call(client, "store_memory", { ...entry });
  });
  const elapsed = performance.now() - started;
  const used = pid === null ? undefined : spent(pid, cpu);
  const threadMs = pid === null || threads === undefined
    ? undefined
    : threadsSpent(pid, threads);
  await client.close();
  return {
    label: lanes === 1
      ? "agentd store_memory, stdio, 1 client, sequential"
      : `agentd store_memory, stdio, 1 client, ${lanes} in flight`,
    count: items.length,
    ms: elapsed,
    samples,
    cpuMs: used,
    threadMs,
  };
}

/** The lone durable commit: the disk's and Deno KV's share of a sequential store. */
async function kvCommitFloor(): Promise<Result> {
  const kv = await Deno.openKv(join(tempDir(), "floor.kv"));
  const items = entries(STORES, 4242);
  const started = performance.now();
  let n = 0;
  const samples = await drive(items, 1, async (entry) => {
    const result = await kv.atomic()
      .set(["entries", entry.key], new TextEncoder().encode(entry.value))
      .set(["count"], ++n)
      .commit();
    if (!result.ok) throw new Error("floor commit failed");
  });
  const elapsed = performance.now() - started;
  kv.close();
  return {
    label: "floor: Deno KV atomic commit of 2 keys, sequential",
    count: items.length,
    ms: elapsed,
    samples,
  };
}

/**
 * The same commit after 1 ms with the thread blocked, as a server's commits
 * come between a client's calls: a commit after a pause costs up to twice
 * one right after another (bench/kv_commit_floor.ts). Only the commits are
 * timed, so stores/s is the rate of commits alone.
 */
async function kvPausedFloor(): Promise<Result> {
  const kv = await Deno.openKv(join(tempDir(), "paused.kv"));
  const items = entries(STORES, 4242);
  const blocker = new Int32Array(new SharedArrayBuffer(4));
  const samples: number[] = [];
  let n = 0;
  for (const entry of items) {
    Atomics.wait(blocker, 0, 0, 1);
    const started = performance.now();
    const result = await kv.atomic()
      .set(["entries", entry.key], new TextEncoder().encode(entry.value))
      .set(["count"], ++n)
      .commit();
    samples.push(performance.now() - started);
    if (!result.ok) throw new Error("floor commit failed");
  }
  kv.close();
  return {
    label: "floor: the same commit, each after 1 ms idle (commits timed)",
    count: items.length,
    ms: samples.reduce((sum, sample) => sum + sample, 0),
    samples,
  };
}

/** The MCP round trip on the kit's stdio transport with a tool that does nothing. */
async function callFloor(): Promise<Result> {
  const { client, pid } = await stdioClient({
    command: Deno.execPath(),
    args: ["run", "-A", join(ROOT, "bench/stdio_ping_server.ts"), "kit"],
  });
  const items = entries(STORES, 4242);
  const cpu = pid === null ? undefined : cpuMs(pid);
  const started = performance.now();
  const samples = await drive(items, 1, async () => {
    await call(client, "ping", {});
  });
  const elapsed = performance.now() - started;
  const used = pid === null ? undefined : spent(pid, cpu);
  await client.close();
  return {
    label: "floor: no-op tools/call, stdio (kit transport), sequential",
    count: items.length,
    ms: elapsed,
    samples,
    cpuMs: used,
  };
}

async function storesPeer(): Promise<Result> {
  const { client } = await stdioClient(
    peerCommand(join(tempDir(), "memory.jsonl")),
  );
  const items = entries(STORES, 4242);
  const started = performance.now();
  const samples = await drive(items, 1, async (entry) => {
    await call(client, "create_entities", {
      entities: [{
        name: entry.key,
        entityType: "memory",
        observations: [entry.value],
      }],
    });
  });
  const elapsed = performance.now() - started;
  await client.close();
  return {
    label: "peer create_entities, stdio, 1 client, sequential",
    count: items.length,
    ms: elapsed,
    samples,
  };
}

/** Entries per call of the batch rows (import_memories, and the peer's create_entities). */
const BATCH = 100;

function batches(items: EntryInput[]): EntryInput[][] {
  const out: EntryInput[][] = [];
  for (let i = 0; i < items.length; i += BATCH) {
    out.push(items.slice(i, i + BATCH));
  }
  return out;
}

/** One client, sequential calls of import_memories with BATCH entries each (answered once all are committed). */
async function importStdio(): Promise<Result> {
  const { client, pid } = await stdioClient(
    agentdCommand(["mcp", "memory", "--data-dir", tempDir()], DENO_FLAGS),
  );
  const items = entries(STORES, 4242);
  const cpu = pid === null ? undefined : cpuMs(pid);
  const threads = pid === null || !THREADS ? undefined : threadCpuMs(pid);
  const started = performance.now();
  const samples = await drive(batches(items), 1, async (batch) => {
    await call(client, "import_memories", {
      namespace: batch[0].namespace,
      entries: batch.map(({ key, value, tags }) => ({ key, value, tags })),
    });
  });
  const elapsed = performance.now() - started;
  const used = pid === null ? undefined : spent(pid, cpu);
  const threadMs = pid === null || threads === undefined
    ? undefined
    : threadsSpent(pid, threads);
  await client.close();
  return {
    label:
      `agentd import_memories, stdio, 1 client, sequential calls of ${BATCH}`,
    count: items.length,
    ms: elapsed,
    samples,
    cpuMs: used,
    threadMs,
  };
}

/** The peer's batch form: create_entities with BATCH entities per call. */
async function peerBatches(): Promise<Result> {
  const { client } = await stdioClient(
    peerCommand(join(tempDir(), "memory.jsonl")),
  );
  const items = entries(STORES, 4242);
  const started = performance.now();
  const samples = await drive(batches(items), 1, async (batch) => {
    await call(client, "create_entities", {
      entities: batch.map((entry) => ({
        name: entry.key,
        entityType: "memory",
        observations: [entry.value],
      })),
    });
  });
  const elapsed = performance.now() - started;
  await client.close();
  return {
    label:
      `peer create_entities, stdio, 1 client, sequential calls of ${BATCH}`,
    count: items.length,
    ms: elapsed,
    samples,
  };
}

async function storesHttp(clientCount: number): Promise<Result> {
  const { clients, close, pid } = await memoryServeClients(clientCount);
  const per = STORES / clientCount;
  const cpu = cpuMs(pid);
  const clientCpu = cpuMs("self");
  const started = performance.now();
  const samples = (await Promise.all(clients.map((client, c) => {
    const items = entries(per, 5000 + c).map((entry) => ({
      ...entry,
      key: `http-${c}-${entry.key}`,
    }));
    return drive(items, 1, async (entry) => {
      await call(client, "store_memory", { ...entry });
    });
  }))).flat();
  const elapsed = performance.now() - started;
  const used = spent(pid, cpu);
  const clientUsed = spent("self", clientCpu);
  await close();
  return {
    label: clientCount === 1
      ? "agentd serve, HTTP, 1 client, sequential"
      : `agentd serve, HTTP, ${clientCount} concurrent clients, sequential`,
    count: samples.length,
    ms: elapsed,
    samples,
    cpuMs: used,
    clientCpuMs: clientUsed,
  };
}

/** "main 420, sw-0 130, V8 DefaultWorke 60": the server's CPU per store by thread. */
function byThread(r: Result): string {
  if (!r.threadMs) return "-";
  return [...r.threadMs].filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${Math.round(ms / r.count * 1000)}`)
    .join(", ");
}

const rows: Record<string, string | number>[] = [];
try {
  for (let run = 1; run <= RUNS; run++) {
    const all: [string, () => Promise<Result>][] = [
      ["inproc", () => storesInProcess(64)],
      ["stdio1", () => storesStdio(1)],
      ["stdio4", () => storesStdio(4)],
      ["stdio16", () => storesStdio(16)],
      ["stdio32", () => storesStdio(32)],
      ["stdio64", () => storesStdio(64)],
      ["stdio128", () => storesStdio(128)],
      ["http1", () => storesHttp(1)],
      ["http4", () => storesHttp(4)],
      ["http16", () => storesHttp(16)],
      ["peer", () => storesPeer()],
      ["import", () => importStdio()],
      ["peerbatch", () => peerBatches()],
      ["kvfloor", () => kvCommitFloor()],
      ["kvpaused", () => kvPausedFloor()],
      ["callfloor", () => callFloor()],
    ];
    const results: Result[] = [];
    for (const [name, row] of all) {
      const asked = ROWS ? ROWS.includes(name) : !OPT_IN.has(name);
      if (asked) results.push(await row());
    }
    for (const r of results) {
      rows.push({
        run,
        writer: r.label,
        stores: r.count,
        "stores/s": Number((r.count / r.ms * 1000).toFixed(0)),
        "p50 ms": ms(percentile(r.samples, 50)),
        "p95 ms": ms(percentile(r.samples, 95)),
        "CPU µs/store": r.cpuMs === undefined
          ? "-"
          : Math.round(r.cpuMs / r.count * 1000),
        "client CPU µs/store": r.clientCpuMs === undefined
          ? "-"
          : Math.round(r.clientCpuMs / r.count * 1000),
        ...(THREADS ? { "by thread µs/store": byThread(r) } : {}),
      });
    }
  }
} finally {
  cleanUp();
}

console.log(
  `\nMemory server stores (Deno ${Deno.version.deno}, Node ${nodeVersion()}, ` +
    `@modelcontextprotocol/server-memory ${peerVersion()}; MCP SDK Client)`,
);
console.table(rows);
