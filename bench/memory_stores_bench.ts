// Memory server write throughput: store_memory calls per second on an empty
// store, against @modelcontextprotocol/server-memory's create_entities.
//
//   stdio, 1 client, sequential   one call at a time (each waits for its answer)
//   stdio, 1 client, 32 in flight one MCP connection with 32 calls outstanding
//   HTTP, 4 clients               4 streamable HTTP sessions on `agentd serve`,
//                                 each sequential
//   HTTP, 16 clients              the same with 16 sessions
//   peer, stdio, sequential       create_entities, one entity per call
//
// Every answer of agentd comes after its write is committed to the KV file
// (SQLite, WAL); concurrent calls share commits (group commit in KvBackend).
// BENCH_MEMORY_RUNS=N repeats the whole set (default 1); the README reports
// the range over runs.
//
//   deno run -A bench/memory_stores_bench.ts

import { join } from "node:path";
import { z } from "zod";
import { Client, StdioClientTransport } from "../platform/mcp_sdk.ts";
import {
  agentdCommand,
  cleanUp,
  type Command,
  type EntryInput,
  fillerEntry,
  killOnExit,
  memoryServeClients,
  ms,
  nodeVersion,
  peerCommand,
  peerVersion,
  percentile,
  ROOT,
  seeded,
  tempDir,
} from "./bench_lib.ts";

const STORES = 2000;
const RUNS = Number(Deno.env.get("BENCH_MEMORY_RUNS") ?? "1");

const ToolResult = z.object({
  isError: z.boolean().optional(),
}).loose();

interface Result {
  label: string;
  count: number;
  ms: number;
  samples: number[];
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

async function stdioClient(cmd: Command): Promise<Client> {
  const transport = new StdioClientTransport({
    command: cmd.command,
    args: cmd.args,
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...cmd.env },
    stderr: "ignore",
  });
  const client = new Client({ name: "agentd-bench", version: "1.0.0" });
  await client.connect(transport);
  if (transport.pid !== null) killOnExit(transport.pid);
  return client;
}

async function storesStdio(lanes: number): Promise<Result> {
  const client = await stdioClient(
    agentdCommand(["mcp", "memory", "--data-dir", tempDir()]),
  );
  const items = entries(STORES, 4242);
  const started = performance.now();
  const samples = await drive(items, lanes, async (entry) => {
    await call(client, "store_memory", { ...entry });
  });
  const elapsed = performance.now() - started;
  await client.close();
  return {
    label: lanes === 1
      ? "agentd store_memory, stdio, 1 client, sequential"
      : `agentd store_memory, stdio, 1 client, ${lanes} in flight`,
    count: items.length,
    ms: elapsed,
    samples,
  };
}

async function storesPeer(): Promise<Result> {
  const client = await stdioClient(
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

async function storesHttp(clientCount: number): Promise<Result> {
  const { clients, close } = await memoryServeClients(clientCount);
  const per = STORES / clientCount;
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
  await close();
  return {
    label: `agentd serve, HTTP, ${clientCount} concurrent clients, sequential`,
    count: samples.length,
    ms: elapsed,
    samples,
  };
}

const rows: Record<string, string | number>[] = [];
try {
  for (let run = 1; run <= RUNS; run++) {
    const results = [
      await storesStdio(1),
      await storesStdio(32),
      await storesHttp(4),
      await storesHttp(16),
      await storesPeer(),
    ];
    for (const r of results) {
      rows.push({
        run,
        writer: r.label,
        stores: r.count,
        "stores/s": Number((r.count / r.ms * 1000).toFixed(0)),
        "p50 ms": ms(percentile(r.samples, 50)),
        "p95 ms": ms(percentile(r.samples, 95)),
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
