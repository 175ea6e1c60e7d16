// The gateway's upstream legs alone: an SDK Client calling server-everything's
// `echo` over streamable HTTP and over stdio, each through the SDK's transport
// and through the gateway's own (tools/kit/transport/http_client.ts,
// tools/kit/transport/stdio_client.ts; each stdio transport runs its own child). The
// CPU this process spends per call is what the gateway spends on that leg;
// other load on the machine moves wall time far more than it moves CPU time.
// Rounds alternate the transports so that load hits them alike. Each round
// makes CALLS calls one after another, then BURST calls with IN_FLIGHT in
// flight (where the stdio transport's coalesced writes matter).
// "+ direct calls" rows call through tools/gateway/direct_calls.ts on the
// gateway's transport (as a routed call does since issue 37), the others
// through the Client's callTool (as the gateway did before).
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
import { StdioClientTransport } from "../platform/mcp_sdk_stdio_client.ts";
import { HttpClientTransport } from "../tools/kit/transport/http_client.ts";
import { StdioUpstreamTransport } from "../tools/kit/transport/stdio_client.ts";
import { DirectCalls } from "../tools/gateway/direct_calls.ts";
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
const BURST = 1000;
const IN_FLIGHT = 16;

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

const gatewayHttp = () => new HttpClientTransport(url, { headers: {} });
const gatewayStdio = () =>
  new StdioUpstreamTransport({
    command: "node",
    args: [EVERYTHING, "stdio"],
    env: {},
    onStderrLine: () => {},
  });

const transports: [string, () => Transport][] = [
  [
    "SDK StreamableHTTPClientTransport",
    () => new StreamableHTTPClientTransport(url),
  ],
  ["gateway HttpClientTransport", gatewayHttp],
  ["gateway HttpClientTransport + direct calls", gatewayHttp],
  [
    "SDK StdioClientTransport",
    () =>
      new StdioClientTransport({
        command: "node",
        args: [EVERYTHING, "stdio"],
        stderr: "pipe",
      }),
  ],
  ["gateway StdioUpstreamTransport", gatewayStdio],
  ["gateway StdioUpstreamTransport + direct calls", gatewayStdio],
];

const only = new RegExp(Deno.env.get("BENCH_TRANSPORTS") ?? "");
const clients: {
  label: string;
  client: Client;
  call: () => Promise<unknown>;
  cpu: number;
  samples: number[];
  burstCpu: number;
  burstMs: number;
}[] = [];
for (const [label, open] of transports) {
  if (!only.test(label)) continue;
  const client = new Client({ name: "transport-bench", version: "1.0.0" });
  const transport = open();
  await client.connect(transport);
  const direct = label.endsWith("+ direct calls")
    ? DirectCalls.of(transport)
    : undefined;
  const signal = new AbortController().signal;
  clients.push({
    label,
    client,
    call: direct
      ? () =>
        direct.call(undefined, "echo", { message: "bench" }, {
          timeoutMs: 60_000,
          maxTotalMs: 600_000,
          signal,
          onprogress() {},
        })
      : () =>
        client.callTool(
          { name: "echo", arguments: { message: "bench" } },
          CallToolResultSchema,
        ),
    cpu: 0,
    samples: [],
    burstCpu: 0,
    burstMs: 0,
  });
}
for (const { call } of clients) {
  for (let i = 0; i < WARMUP; i++) await call();
}
for (let round = 0; round < ROUNDS; round++) {
  for (const target of clients) {
    const before = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      await target.call();
      target.samples.push(performance.now() - started);
    }
    const used = process.cpuUsage(before);
    target.cpu += (used.user + used.system) / 1000;
    const burstBefore = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next++ < BURST) await target.call();
      }),
    );
    target.burstMs += performance.now() - started;
    const burstUsed = process.cpuUsage(burstBefore);
    target.burstCpu += (burstUsed.user + burstUsed.system) / 1000;
  }
}
console.table(clients.map(({ label, cpu, samples, burstCpu, burstMs }) => ({
  transport: label,
  "CPU ms per call (this process)": (cpu / (ROUNDS * CALLS)).toFixed(3),
  "p50 ms": ms(percentile(samples, 50)),
  [`CPU ms per call, ${IN_FLIGHT} in flight`]: (burstCpu / (ROUNDS * BURST))
    .toFixed(3),
  [`calls/s, ${IN_FLIGHT} in flight`]: Math.round(
    (ROUNDS * BURST) / (burstMs / 1000),
  ),
})));
for (const { client } of clients) await client.close();
server.kill();
await server.status;
