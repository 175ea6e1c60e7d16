// The gateway's HTTP upstream leg alone: an SDK Client calling
// server-everything's `echo` over streamable HTTP through the SDK's transport
// and through the gateway's own (tools/gateway/http_transport.ts). The
// CPU this process spends per call is what the gateway spends on that leg;
// other load on the machine moves wall time far more than it moves CPU time.
// Rounds alternate the transports so that load hits them alike.
// BENCH_TRANSPORTS=REGEX keeps the transports whose label matches (to profile one).
//
//   deno run -A bench/gateway_transport_bench.ts

import process from "node:process";
import {
  CallToolResultSchema,
  Client,
  StreamableHTTPClientTransport,
  type Transport,
} from "../platform/mcp_sdk.ts";
import { HttpClientTransport } from "../tools/gateway/http_transport.ts";
import {
  EVERYTHING,
  everythingPort,
  freePort,
  portFromOutput,
} from "./mcp_lib.ts";
import { killOnExit, ms, percentile } from "./bench_lib.ts";

const WARMUP = 300;
const ROUNDS = 6;
const CALLS = 500;

const port = freePort();
const server = new Deno.Command("node", {
  args: [EVERYTHING, "streamableHttp"],
  env: { PORT: String(port) },
  stdin: "null",
  stdout: "null",
  stderr: "piped",
}).spawn();
killOnExit(server.pid);
await portFromOutput("server-everything", server.stderr, everythingPort);
const url = new URL(`http://127.0.0.1:${port}/mcp`);

const transports: [string, () => Transport][] = [
  [
    "SDK StreamableHTTPClientTransport",
    () => new StreamableHTTPClientTransport(url),
  ],
  [
    "gateway HttpClientTransport",
    () => new HttpClientTransport(url, { headers: {} }),
  ],
];

const only = new RegExp(Deno.env.get("BENCH_TRANSPORTS") ?? "");
const clients: {
  label: string;
  client: Client;
  cpu: number;
  samples: number[];
}[] = [];
for (const [label, open] of transports) {
  if (!only.test(label)) continue;
  const client = new Client({ name: "transport-bench", version: "1.0.0" });
  await client.connect(open());
  clients.push({ label, client, cpu: 0, samples: [] });
}
const call = (client: Client) =>
  client.callTool(
    { name: "echo", arguments: { message: "bench" } },
    CallToolResultSchema,
  );

for (const { client } of clients) {
  for (let i = 0; i < WARMUP; i++) await call(client);
}
for (let round = 0; round < ROUNDS; round++) {
  for (const target of clients) {
    const before = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      await call(target.client);
      target.samples.push(performance.now() - started);
    }
    const used = process.cpuUsage(before);
    target.cpu += (used.user + used.system) / 1000;
  }
}
console.table(clients.map(({ label, cpu, samples }) => ({
  transport: label,
  "CPU ms per call (this process)": (cpu / (ROUNDS * CALLS)).toFixed(3),
  "p50 ms": ms(percentile(samples, 50)),
})));
for (const { client } of clients) await client.close();
server.kill();
await server.status;
