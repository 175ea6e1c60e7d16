// Memory server search latency at 10k (and, with BENCH_MEMORY_LARGE=1, 100k)
// entries in one namespace, start time and memory at that size, and stores/s.
// BENCH_MEMORY_MILLION=1 adds an in-process search run over 1M entries.
//
// The store is written in-process with the server's own KvBackend.put and
// builtin embeddings, at the place `agentd mcp memory --data-dir <dir>` reads
// it (see populate in bench_lib.ts): writing 100k entries through MCP would
// take minutes. Entries are seeded notes of 20–60 words drawn by Zipf's law
// from ~330 common words and 6,000 made-up ones, with 0–3 tags.
//
// Then `deno run -A main.ts mcp memory --data-dir <dir>` is driven over stdio
// by the MCP SDK Client in this process:
//   start          spawn → first tools/list answer; the server loads its
//                  index behind that (memory_index_loaded log line): index
//                  ready is spawn → that line. Each size starts twice:
//                  with the snapshot populate saved marked as another
//                  tokenizer's (rebuilt from the entries, as every start did
//                  before; the vectors, stored once, come from the snapshot),
//                  then from the snapshot that start saved
//   RSS            VmRSS once the index is ready, after the queries, and VmHWM;
//                  a third start runs with --max-semi-space-size=1, the V8
//                  flag of `deno task start`, the service files and compile
//   search_memory  200 distinct 3-word queries (limit 10) after 20 warm-up
//                  queries; p50/p95 of the client-side round trip
//   one word       200 one-word queries, against the peer's search_nodes
//   stores/s       2,000 sequential store_memory calls over stdio on an empty
//                  store; 4 concurrent HTTP clients × 500 on `agentd serve`
// Peer: @modelcontextprotocol/server-memory on Node with the same 10k notes
// as entities (name = key, one observation = value) and 2,000 sequential
// create_entities calls. Its search_nodes is a case-insensitive substring
// filter over the whole JSONL file, read on every call, returning every
// match unranked; agentd returns the 10 best of BM25 + vectors. So the peer
// row is "what a call costs", not the same work.
//
//   deno bench -A bench/memory_search_bench.ts
//   BENCH_MEMORY_LARGE=1 deno bench -A bench/memory_search_bench.ts
//   BENCH_MEMORY_MILLION=1 deno bench -A bench/memory_search_bench.ts

import { join } from "node:path";
import { z } from "zod";
import { openKvStore } from "../platform/store/kv.ts";
import { millionRun } from "./memory_million.ts";
import { Client } from "../platform/mcp_sdk.ts";
import { StdioClientTransport } from "../platform/mcp_sdk_stdio_client.ts";
import {
  agentdCommand,
  cleanUp,
  type Command,
  type EntryInput,
  fillerEntry,
  killOnExit,
  memoryOf,
  memoryServeClients,
  mib,
  ms,
  NAMESPACE,
  nodeVersion,
  peerCommand,
  peerVersion,
  percentile,
  populate,
  type ProcessMemory,
  queryText,
  ROOT,
  seeded,
  tempDir,
  writePeerGraph,
} from "./bench_lib.ts";

const LARGE = Deno.env.get("BENCH_MEMORY_LARGE") === "1";
const MILLION = Deno.env.get("BENCH_MEMORY_MILLION") === "1";
const SIZES = LARGE ? [10_000, 100_000] : [10_000];
const QUERIES = 200;
const WARMUP = 20;
const STORES = 2000;
const HTTP_CLIENTS = 4;
const START_TIMEOUT_MS = 600_000;

// ------------------------------------------------------------ helpers

const ToolResult = z.object({
  isError: z.boolean().optional(),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
}).loose();
const Hits = z.object({ hits: z.array(z.unknown()) });
const Entities = z.object({ entities: z.array(z.unknown()) });
const ToolList = z.object({ tools: z.array(z.object({ name: z.string() })) });
const IndexLoaded = z.object({
  entries: z.number(),
  ms: z.number(),
  loaded: z.number().optional(),
  rebuilt: z.number().optional(),
});

interface Server {
  label: string;
  client: Client;
  pid: number;
  /** Spawn → first tools/list answer. */
  startMs: number;
  /** From the memory_index_loaded log line. */
  index?: z.infer<typeof IndexLoaded> & { atMs: number };
  afterStart?: ProcessMemory;
  /** Once the index is ready. */
  afterIndex?: ProcessMemory;
}

function entries(count: number, seed = 42): Iterable<EntryInput> {
  return {
    *[Symbol.iterator]() {
      const random = seeded(seed);
      for (let i = 0; i < count; i++) yield fillerEntry(random, i);
    },
  };
}

/** Starts a stdio server, connects the SDK Client and waits for tools/list. */
async function startStdio(label: string, cmd: Command): Promise<Server> {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: cmd.command,
    args: cmd.args,
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...cmd.env },
    stderr: "pipe",
  });
  const server: Omit<Server, "client" | "pid" | "startMs"> = { label };
  const decoder = new TextDecoder();
  let buffer = "";
  transport.stderr?.on("data", (chunk: unknown) => {
    buffer += chunk instanceof Uint8Array
      ? decoder.decode(chunk, { stream: true })
      : String(chunk);
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (server.index || !line.includes("memory_index_loaded")) continue;
      const loaded = IndexLoaded.safeParse(parseJson(line));
      if (loaded.success) {
        server.index = {
          ...loaded.data,
          atMs: performance.now() - started,
        };
      }
    }
  });
  const client = new Client({ name: "agentd-bench", version: "1.0.0" });
  try {
    await client.connect(transport, { timeout: START_TIMEOUT_MS });
  } catch (error) {
    await transport.close();
    throw error;
  }
  const pid = transport.pid;
  if (pid === null) throw new Error(`${label}: no child process`);
  killOnExit(pid);
  await client.request({ method: "tools/list", params: {} }, ToolList, {
    timeout: START_TIMEOUT_MS,
  });
  const startMs = performance.now() - started;
  // The same object the stderr reader fills in: the index may finish loading later.
  return Object.assign(server, {
    client,
    pid,
    startMs,
    afterStart: memoryOf(pid),
  });
}

/** Waits for the memory_index_loaded line, then reads the RSS. */
async function indexReady(server: Server): Promise<void> {
  const deadline = performance.now() + START_TIMEOUT_MS;
  while (!server.index) {
    if (performance.now() > deadline) throw new Error("index never loaded");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  server.afterIndex = memoryOf(server.pid);
}

/**
 * Marks the index snapshot as made by another tokenizer, so the next start
 * rebuilds the index from the entries (taking only the vectors from the
 * snapshot, their one copy), as after a change of tokenizer.
 */
async function dropSnapshot(dir: string): Promise<void> {
  const kv = await openKvStore(join(dir, "store.kv"));
  const key = ["svc-memory", "entries", "x", NAMESPACE];
  const head = (await kv.get(key))?.value;
  if (!head || typeof head !== "object" || Array.isArray(head)) {
    throw new Error("no index snapshot to mark");
  }
  await kv.set(key, { ...head, tokenizer: "0" });
  await kv.close();
}

function startRow(server: Server, label: string): Record<string, string> {
  const how = server.index?.loaded ? "loaded" : "rebuilt";
  return {
    server: label,
    "start ms": server.startMs.toFixed(0),
    "index ready ms": server.index
      ? `${server.index.atMs.toFixed(0)} (${how}, load ${server.index.ms})`
      : "?",
    "RSS index ready MiB": mib(server.afterIndex?.rssKiB ?? NaN),
    "RSS after queries MiB": mib(memoryOf(server.pid)?.rssKiB ?? NaN),
    "peak MiB": mib(memoryOf(server.pid)?.hwmKiB ?? NaN),
  };
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Calls a tool; throws unless it succeeded. Returns its structuredContent. */
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const result = ToolResult.parse(
    await client.callTool({ name, arguments: args }),
  );
  if (result.isError === true || !result.structuredContent) {
    throw new Error(`${name}: ${JSON.stringify(result).slice(0, 500)}`);
  }
  return result.structuredContent;
}

/** Runs `fn` for every item in order; returns each call's milliseconds. */
async function timed<T>(
  items: readonly T[],
  fn: (item: T) => Promise<void>,
): Promise<number[]> {
  const samples: number[] = [];
  for (const item of items) {
    const started = performance.now();
    await fn(item);
    samples.push(performance.now() - started);
  }
  return samples;
}

interface Latency {
  label: string;
  samples: number[];
  /** Mean hits (agentd) or matching entities (peer) per query. */
  results: number;
}

async function searchLatency(
  label: string,
  server: Server,
  queries: readonly string[],
  tool: "search_memory" | "search_nodes",
): Promise<Latency> {
  let results = 0;
  const run = async (query: string) => {
    if (tool === "search_memory") {
      const out = await call(server.client, tool, {
        namespace: NAMESPACE,
        query,
        limit: 10,
      });
      results += Hits.parse(out).hits.length;
    } else {
      const out = await call(server.client, tool, { query });
      results += Entities.parse(out).entities.length;
    }
  };
  await timed(queries.slice(0, WARMUP), run);
  results = 0;
  const samples = await timed(queries.slice(WARMUP), run);
  return { label, samples, results: results / samples.length };
}

/** Reads stderr lines until one is agentd's `listening` line; keeps draining after. */
interface Throughput {
  label: string;
  count: number;
  ms: number;
  samples: number[];
}

async function storesStdio(): Promise<Throughput> {
  const server = await startStdio(
    "agentd stdio",
    agentdCommand(["mcp", "memory", "--data-dir", tempDir()]),
  );
  const items = [...entries(STORES, 4242)];
  const started = performance.now();
  const samples = await timed(items, async (entry) => {
    await call(server.client, "store_memory", { ...entry });
  });
  const elapsed = performance.now() - started;
  await server.client.close();
  return {
    label: "agentd mcp memory, stdio, 1 client",
    count: items.length,
    ms: elapsed,
    samples,
  };
}

async function storesPeer(): Promise<Throughput> {
  const server = await startStdio(
    "peer",
    peerCommand(join(tempDir(), "memory.jsonl")),
  );
  const items = [...entries(STORES, 4242)];
  const started = performance.now();
  const samples = await timed(items, async (entry) => {
    await call(server.client, "create_entities", {
      entities: [{
        name: entry.key,
        entityType: "memory",
        observations: [entry.value],
      }],
    });
  });
  const elapsed = performance.now() - started;
  await server.client.close();
  return {
    label: "peer create_entities, stdio, 1 client",
    count: items.length,
    ms: elapsed,
    samples,
  };
}

async function storesHttp(): Promise<Throughput> {
  const { clients, close } = await memoryServeClients(HTTP_CLIENTS);
  const per = STORES / HTTP_CLIENTS;
  const started = performance.now();
  const samples = (await Promise.all(clients.map((client, c) => {
    const items = [...entries(per, 5000 + c)].map((entry) => ({
      ...entry,
      key: `http-${c}-${entry.key}`,
    }));
    return timed(items, async (entry) => {
      await call(client, "store_memory", { ...entry });
    });
  }))).flat();
  const elapsed = performance.now() - started;
  await close();
  return {
    label: `agentd serve, HTTP, ${HTTP_CLIENTS} concurrent clients`,
    count: samples.length,
    ms: elapsed,
    samples,
  };
}

function fileMiB(path: string): string {
  try {
    return (Deno.statSync(path).size / 1024 / 1024).toFixed(1);
  } catch {
    return "?";
  }
}

// ------------------------------------------------------------ the run

const random = seeded(9001);
const threeWord = Array.from(
  { length: WARMUP + QUERIES },
  () => queryText(random, 3),
);
// Made-up words of 7+ letters, so the peer's substring match finds few
// accidental matches inside other words.
const oneWord = Array.from(
  { length: WARMUP + QUERIES },
  () => queryText(random, 1, { from: 330, minLength: 7 }),
);

const servers = new Map<number, Server>();
const latencies: Latency[] = [];
const memories: Record<string, string>[] = [];
const populated: Record<string, string>[] = [];
let peer: Server | undefined;
let stores: Throughput[] = [];

try {
  for (const size of SIZES) {
    const dir = tempDir();
    const result = await populate(dir, entries(size));
    populated.push({
      entries: String(result.count),
      "KvBackend.put in-process, entries/s": (result.count / result.ms * 1000)
        .toFixed(0),
      "store.kv MiB": fileMiB(join(dir, "store.kv")),
    });
    // First a start that rebuilds (snapshot head removed), then one that loads the snapshot it saved.
    await dropSnapshot(dir);
    const rebuilding = await startStdio(
      `agentd ${size / 1000}k rebuild`,
      agentdCommand(["mcp", "memory", "--data-dir", dir]),
    );
    await indexReady(rebuilding);
    await searchLatency(
      "warm-up",
      rebuilding,
      threeWord.slice(0, 40),
      "search_memory",
    );
    memories.push(
      startRow(
        rebuilding,
        `agentd, ${size / 1000}k, snapshot of another tokenizer: rebuild`,
      ),
    );
    await rebuilding.client.close();
    const server = await startStdio(
      `agentd ${size / 1000}k`,
      agentdCommand(["mcp", "memory", "--data-dir", dir]),
    );
    await indexReady(server);
    servers.set(size, server);
    latencies.push(
      await searchLatency(
        `agentd search_memory, 3 words, ${size / 1000}k`,
        server,
        threeWord,
        "search_memory",
      ),
      await searchLatency(
        `agentd search_memory, 1 word, ${size / 1000}k`,
        server,
        oneWord,
        "search_memory",
      ),
    );
    if (size === 10_000) {
      const file = join(tempDir(), "memory.jsonl");
      await writePeerGraph(file, entries(size));
      peer = await startStdio("peer 10k", peerCommand(file));
      latencies.push(
        await searchLatency(
          "peer search_nodes, 1 word, 10k",
          peer,
          oneWord,
          "search_nodes",
        ),
      );
      memories.push({
        server: "peer: server-memory, 10k entities",
        "start ms": peer.startMs.toFixed(0),
        "index ready ms": "(none: reads the file per call)",
        "RSS index ready MiB": mib(peer.afterStart?.rssKiB ?? NaN),
        "RSS after queries MiB": mib(memoryOf(peer.pid)?.rssKiB ?? NaN),
        "peak MiB": mib(memoryOf(peer.pid)?.hwmKiB ?? NaN),
        "data MiB": `${fileMiB(file)} (JSONL)`,
      });
    }
    memories.push({
      ...startRow(server, `agentd, ${size / 1000}k, persisted index`),
      "data MiB": `${fileMiB(join(dir, "store.kv"))} (store.kv)`,
    });
    // Again with the V8 flag the daemon runs with (deno task start, service files, deno compile).
    const small = await startStdio(
      `agentd ${size / 1000}k semi-space 1`,
      agentdCommand(["mcp", "memory", "--data-dir", dir], [
        "--v8-flags=--max-semi-space-size=1",
      ]),
    );
    await indexReady(small);
    await searchLatency("warm-up", small, threeWord, "search_memory");
    memories.push(
      startRow(
        small,
        `agentd, ${size / 1000}k, persisted index, --max-semi-space-size=1`,
      ),
    );
    await small.client.close();
  }
  stores = [await storesStdio(), await storesPeer(), await storesHttp()];
} catch (error) {
  cleanUp();
  throw error;
}

console.log(
  `\nMemory server search and stores (Deno ${Deno.version.deno}, Node ${nodeVersion()}, ` +
    `@modelcontextprotocol/server-memory ${peerVersion()}; MCP SDK Client over stdio)`,
);
console.log("\nPopulated stores (written in-process, not over MCP)");
console.table(populated);
console.log("\nStart at size and memory");
console.table(memories);
console.log(
  `\nSearch latency, client round trip, ${QUERIES} distinct queries after ${WARMUP} warm-up`,
);
console.table(latencies.map((l) => ({
  search: l.label,
  "p50 ms": ms(percentile(l.samples, 50)),
  "p95 ms": ms(percentile(l.samples, 95)),
  "max ms": ms(Math.max(...l.samples)),
  "results/query": l.results.toFixed(1),
})));
if (MILLION) {
  console.log("\n1M entries, in process (SearchIndex, builtin embedder)");
  console.table(await millionRun(threeWord));
}
console.log("\nStores");
console.table(stores.map((s) => ({
  writer: s.label,
  stores: s.count,
  "stores/s": (s.count / s.ms * 1000).toFixed(0),
  "p50 ms": ms(percentile(s.samples, 50)),
  "p95 ms": ms(percentile(s.samples, 95)),
})));

// ------------------------------------------------------------ Deno.bench

for (const [size, server] of servers) {
  let i = 0;
  Deno.bench({
    name: `agentd search_memory ${size / 1000}k`,
    group: "search_memory, 3 words (stdio)",
    n: QUERIES,
    warmup: WARMUP,
    fn: async () => {
      await call(server.client, "search_memory", {
        namespace: NAMESPACE,
        query: threeWord[i++ % threeWord.length],
        limit: 10,
      });
    },
  });
}
const small = servers.get(10_000);
if (peer && small) {
  const peerServer = peer;
  for (const server of [peerServer, small]) {
    let i = 0;
    const isPeer = server === peerServer;
    Deno.bench({
      name: isPeer ? "peer search_nodes 10k" : "agentd search_memory 10k",
      group: "one-word search at 10k (stdio)",
      baseline: isPeer,
      n: QUERIES,
      warmup: WARMUP,
      fn: async () => {
        const query = oneWord[i++ % oneWord.length];
        if (isPeer) await call(server.client, "search_nodes", { query });
        else {
          await call(server.client, "search_memory", {
            namespace: NAMESPACE,
            query,
            limit: 10,
          });
        }
      },
    });
  }
}

// bench_lib.ts runs cleanUp (children, temp dirs) on unload.
