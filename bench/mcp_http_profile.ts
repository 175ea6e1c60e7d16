// A CPU profile of `agentd serve`'s main thread while C streamable HTTP
// clients (the SDK's, as bench/memory_stores_bench.ts's HTTP rows) make N
// `store_memory` calls: the daemon runs with --inspect and this script takes
// the profile over the inspector's WebSocket, so the clients' own work (same
// machine) is not in it. Prints the server's CPU per store (all threads, from
// /proc) and the files and functions with the most self time.
//
//   deno run -A bench/mcp_http_profile.ts [stores] [clients]
//
// HTTP_PROFILE_CPU=1: no profiler, only CPU per store (for before/after runs).
// HTTP_PROFILE_PING=1: `ping` instead of `store_memory`: what the HTTP path
// (server, guards, routing, session transport, SDK) costs per request alone.

import { freePort } from "../tests/helpers.ts";
import {
  cpuMsOrThrow,
  fillerEntry,
  inspector,
  memoryServeClients,
  printShares,
  seeded,
  stopProfile,
} from "./bench_lib.ts";

const count = Number(Deno.args[0] ?? 3000);
const clientCount = Number(Deno.args[1] ?? 16);
const profiling = Deno.env.get("HTTP_PROFILE_CPU") !== "1";
const pinging = Deno.env.get("HTTP_PROFILE_PING") === "1";

const inspectPort = freePort();
const { clients, pid, close } = await memoryServeClients(
  clientCount,
  profiling ? [`--inspect=127.0.0.1:${inspectPort}`] : [],
);
const cdp = profiling ? await inspector(inspectPort) : undefined;
await cdp?.send("Profiler.enable");
await cdp?.send("Profiler.setSamplingInterval", { interval: 200 });
await cdp?.send("Profiler.start");

const per = Math.floor(count / clientCount);
const before = cpuMsOrThrow(pid);
const started = performance.now();
await Promise.all(clients.map(async (client, c) => {
  const random = seeded(7000 + c);
  for (let i = 0; i < per; i++) {
    if (pinging) {
      await client.ping();
      continue;
    }
    const entry = fillerEntry(random, i);
    const result = await client.callTool({
      name: "store_memory",
      arguments: { ...entry, key: `p-${c}-${entry.key}` },
    });
    if (result.isError === true) throw new Error(JSON.stringify(result));
  }
}));
const elapsed = performance.now() - started;
const used = cpuMsOrThrow(pid) - before;
const stores = per * clientCount;
console.log(
  `${stores} ${pinging ? "pings" : "stores"}, ${clientCount} clients: ${
    Math.round(stores / elapsed * 1000)
  }/s, server CPU ${Math.round(used / stores * 1000)} µs/${
    pinging ? "ping" : "store"
  }`,
);

if (cdp) {
  const { nodes } = await stopProfile(cdp);
  printShares(nodes);
  cdp.close();
}
await close();
