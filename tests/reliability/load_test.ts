// Load: 200 concurrent MCP clients over streamable HTTP on one `agentd
// serve` (memory writes and searches at /mcp/memory, gateway routes at /mcp)
// while /v1 sends go to the local model server, for a fixed count of calls:
// no errors, p99 latency reported, the daemon's RSS and its JS heap after a
// full GC measured after the warm-up and at the end (growth bounded), every
// session reclaimed by DELETE at the end. The daemon runs with the V8 flags
// of `deno task start`. AGENTD_RELIABILITY_LONG=1 keeps the rounds going for
// 10 minutes after the warm-up.

import assert from "node:assert/strict";
import { SendReply } from "../../agents/schemas.ts";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { startModelServer } from "../agents/model_server.ts";
import { resultText } from "../agents/stack.ts";
import { api, type Daemon, tempDir, waitFor } from "../helpers.ts";
import { LONG } from "./bad_values.ts";
import { spawnInspectedServe } from "./inspected.ts";

const CLIENTS = 200;
const CALLS_PER_ROUND = 4;
const SENDERS = 10;
const MIB = 1024 * 1024;
/**
 * Rounds (840 calls each) until the RSS settles: V8 grows its heap to
 * several times the live heap for this allocation rate and glibc's arena
 * keeps its free chunks (RSS peak of a round 300–400 MiB for ~42 MiB live).
 * Not a leak: the JS heap after a full GC is flat from round 5, the
 * sessions' event stores included (figures: RELIABILITY.md).
 */
export const WARM_ROUNDS = 15;
/** After the warm-up the RSS (the peak of the last round against that of the last warm-up round) may grow by at most this much. */
export const RSS_GROWTH_BOUND = 150 * MIB;
/**
 * After the warm-up the JS heap after a full GC may grow by at most this
 * much. The sessions' event stores fill as calls get slower than 1 s (they
 * then answer on a stream), so with the load on the machine: full, they hold
 * at most 200 × 16 KiB (tools/kit/transport/event_store.ts).
 */
export const HEAP_GROWTH_BOUND = 8 * MIB;
const SOAK_MS = 10 * 60_000;
/**
 * AGENTD_RELIABILITY_TRACE=<dir>: the daemon's memory figures every 5 rounds
 * and heap snapshots after these rounds (the run goes on to the last), for
 * `heap_summary.ts`.
 */
const TRACE = Deno.env.get("AGENTD_RELIABILITY_TRACE");
const SNAPSHOT_ROUNDS = [5, 15, 30];

interface Peer {
  client: Client;
  transport: StreamableHTTPClientTransport;
  via: "memory" | "gateway";
}

function rssOf(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kib = Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? 0);
  return kib * 1024;
}

/** Resident memory by kind (/proc smaps_rollup): anonymous (heaps) and file-backed. */
function memoryOf(pid: number): Record<string, number> {
  const rollup = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`);
  const kib = (field: string) =>
    Number(rollup.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0) *
    1024;
  return { rssAnon: kib("Anonymous"), rssFile: kib("Rss") - kib("Anonymous") };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function sessions(daemon: Daemon): Promise<Record<string, number>> {
  const health = (await api(daemon, "GET", "/health")).json;
  const servers = Object(Object(health).servers);
  return {
    memory: Number(Object(servers.memory).sessions ?? 0),
    gateway: Number(Object(servers.gateway).sessions ?? 0),
  };
}

Deno.test("load: 200 concurrent MCP clients, mixed tools and /v1 sends: no errors, p99, bounded RSS, sessions reclaimed", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await spawnInspectedServe(dir.path, {
    ...model.env,
    AGENTD_SERVERS: "gateway,memory",
    AGENTD_AGENTS__DEFAULT_MODEL: "openai/default-model",
  });
  const pid = daemon.process.pid;
  const rss: number[] = [];
  const sampler = setInterval(() => rss.push(rssOf(pid)), 250);
  /** The highest RSS sampled while `work` ran (and once at its end). */
  const peakDuring = async (work: () => Promise<void>) => {
    const from = rss.length;
    await work();
    rss.push(rssOf(pid));
    return Math.max(...rss.slice(from));
  };
  const latencies: number[] = [];
  const byName = new Map<string, number[]>();
  const errors: string[] = [];
  const peers: Peer[] = [];
  try {
    assert.equal(
      (await api(daemon, "POST", "/v1/agents", { name: "loaded" })).status,
      201,
    );
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, i) => {
        const via = i % 3 === 2 ? "gateway" : "memory";
        const transport = new StreamableHTTPClientTransport(
          new URL(`${daemon.url}/mcp${via === "memory" ? "/memory" : ""}`),
        );
        const client = new Client({ name: `load-${i}`, version: "1" });
        await client.connect(transport);
        peers.push({ client, transport, via });
      }),
    );
    const timed = async (
      what: string,
      call: () => Promise<string | undefined>,
    ) => {
      const started = performance.now();
      try {
        const problem = await call();
        if (problem) errors.push(`${what}: ${problem}`);
      } catch (error) {
        errors.push(`${what}: ${error}`);
      }
      const ms = performance.now() - started;
      latencies.push(ms);
      byName.set(what, [...byName.get(what) ?? [], ms]);
    };
    const round = async (r: number) => {
      const mcp = peers.map((peer, i) => async () => {
        for (let c = 0; c < CALLS_PER_ROUND; c++) {
          // Keys repeat across rounds, so the memory data set is fixed after round 0 (each /v1 send adds a conversation, on disk).
          const key = `k${i}-${c}`;
          const [name, args] = peer.via === "gateway"
            ? c % 2 === 0
              ? ["memory__store_memory", {
                namespace: "load",
                key,
                value: `gw ${key} round ${r}`,
              }]
              : ["route_tool_call", {
                server: "memory",
                tool: "search_memory",
                args: { namespace: "load", query: `value k${i}` },
              }]
            : c % 2 === 0
            ? ["store_memory", {
              namespace: "load",
              key,
              value: `value ${key} round ${r}`,
            }]
            : ["search_memory", { namespace: "load", query: `value k${i}` }];
          await timed(name, async () => {
            const result = await peer.client.callTool({
              name,
              arguments: args,
            });
            return result.isError
              ? resultText(result).slice(0, 200)
              : undefined;
          });
        }
      });
      const sends = Array.from({ length: SENDERS }, () => async () => {
        for (let c = 0; c < CALLS_PER_ROUND; c++) {
          await timed("send", async () => {
            const reply = await api(daemon, "POST", "/v1/agents/loaded/send", {
              message: "hello",
            });
            if (reply.status !== 200) {
              return `${reply.status} ${reply.text.slice(0, 200)}`;
            }
            SendReply.parse(reply.json);
          });
        }
      });
      await Promise.all([...mcp, ...sends].map((work) => work()));
    };
    let rounds = 0;
    let warm = 0;
    /** After round `rounds`: a snapshot when asked for, the daemon's memory figures. */
    const trace = async () => {
      const inside = await daemon.memoryAfterGc();
      const figures = { ...memoryOf(pid), ...inside };
      console.log(
        `  round ${rounds}: ${
          Object.entries(figures).map(([k, v]) =>
            `${k} ${(v / MIB).toFixed(1)}`
          ).join(", ")
        } MiB (after GC)`,
      );
      if (TRACE && SNAPSHOT_ROUNDS.includes(rounds)) {
        await daemon.heapSnapshot(`${TRACE}/round-${rounds}.heapsnapshot`);
      }
    };
    const traced = (r: number) => TRACE ? r % 5 === 0 : LONG && r % 20 === 0;
    while (rounds < WARM_ROUNDS) {
      warm = await peakDuring(() => round(rounds++));
      if (traced(rounds)) await trace();
    }
    const heapWarm = await daemon.heapAfterGc();
    const warmCalls = latencies.length;
    const started = Date.now();
    let end = 0;
    do {
      end = await peakDuring(() => round(rounds++));
      if (LONG && rounds % 20 === 0) {
        console.log(
          `  round ${rounds}: RSS peak ${(end / MIB).toFixed(0)} MiB`,
        );
      }
      if (traced(rounds)) await trace();
    } while (
      LONG
        ? Date.now() - started < SOAK_MS
        : rounds < (TRACE ? Math.max(...SNAPSHOT_ROUNDS) : WARM_ROUNDS + 4)
    );
    const heapEnd = await daemon.heapAfterGc();
    assert.deepEqual(errors.slice(0, 5), [], `${errors.length} errors`);
    const sorted = latencies.slice(warmCalls).sort((a, b) => a - b);
    const peak = Math.max(...rss);
    console.log(
      `load: ${CLIENTS} MCP clients + ${SENDERS} /v1 senders, ${latencies.length} calls in ${rounds} rounds, 0 errors; ` +
        `p50 ${percentile(sorted, 0.5).toFixed(1)} ms, p99 ${
          percentile(sorted, 0.99).toFixed(1)
        } ms; ` +
        `RSS (round peak) warm ${(warm / MIB).toFixed(0)} MiB, end ${
          (end / MIB).toFixed(0)
        } MiB, peak ${(peak / MIB).toFixed(0)} MiB; ` +
        `JS heap after GC warm ${(heapWarm / MIB).toFixed(1)} MiB, end ${
          (heapEnd / MIB).toFixed(1)
        } MiB`,
    );
    for (const [name, values] of byName) {
      const ordered = values.sort((a, b) => a - b);
      console.log(
        `  ${name} (warm-up included): ${values.length} calls, p50 ${
          percentile(ordered, 0.5).toFixed(1)
        } ms, p99 ${percentile(ordered, 0.99).toFixed(1)} ms`,
      );
    }
    assert.ok(
      end - warm <= RSS_GROWTH_BOUND,
      `RSS grew ${((end - warm) / MIB).toFixed(0)} MiB after warm-up`,
    );
    assert.ok(
      heapEnd - heapWarm <= HEAP_GROWTH_BOUND,
      `JS heap after GC grew ${
        ((heapEnd - heapWarm) / MIB).toFixed(1)
      } MiB after warm-up`,
    );
    const open = await sessions(daemon);
    assert.ok(open.memory + open.gateway >= CLIENTS, JSON.stringify(open));
  } finally {
    clearInterval(sampler);
    await Promise.all(peers.map(async (peer) => {
      await peer.transport.terminateSession();
      await peer.client.close();
    }));
  }
  try {
    // DELETE reclaimed every session: none left open.
    await waitFor(
      () => sessions(daemon),
      (open) => open.memory === 0 && open.gateway === 0,
    );
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});
