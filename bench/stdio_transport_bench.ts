// The stdio transport alone: CPU per tools/call of a one-tool server
// (bench/stdio_ping_server.ts) on the MCP SDK's StdioServerTransport against
// the kit's (tools/kit/transport/stdio_server.ts), alternating in one run; `kitasync`
// is the kit's with asynchronous `Deno.stdout.write` instead of `writeSync`. The
// client writes raw JSON-RPC lines and keeps N calls in flight, so its own
// cost stays small; the server's CPU (user + sys, all threads, /proc) per
// call is the figure: the tool does nothing, so the difference between the
// rows is the transport's.
//
//   deno run -A bench/stdio_transport_bench.ts
//   BENCH_CALLS (default 5000), BENCH_LANES (default "1,32,128"),
//   BENCH_ROUNDS (alternations, default 3)

import { join } from "node:path";
import { cleanUp, cpuMsOf, DENO, killOnExit, ROOT } from "./bench_lib.ts";
import { LATEST_PROTOCOL_VERSION } from "../platform/mcp_sdk_server.ts";

const CALLS = Number(Deno.env.get("BENCH_CALLS") ?? 5000);
const LANES = (Deno.env.get("BENCH_LANES") ?? "1,32,128").split(",").map(
  Number,
);
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 3);
const SERVER = join(ROOT, "bench/stdio_ping_server.ts");

interface Run {
  transport: string;
  lanes: number;
  callsPerSecond: number;
  cpuUsPerCall: number;
}

async function run(transport: string, lanes: number): Promise<Run> {
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", SERVER, transport],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  killOnExit(child.pid);
  const encoder = new TextEncoder();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  let buffer = "";
  /** Reads until `count` more answers arrived. */
  async function answers(count: number): Promise<void> {
    for (;;) {
      let newline = buffer.indexOf("\n");
      while (newline >= 0 && count > 0) {
        count--;
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
      }
      if (count === 0) return;
      const { value, done } = await reader.read();
      if (done) throw new Error("server closed stdout");
      buffer += value;
    }
  }
  const line = (message: unknown) => `${JSON.stringify(message)}\n`;
  await writer.write(encoder.encode(
    line({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    }) + line({ jsonrpc: "2.0", method: "notifications/initialized" }),
  ));
  await answers(1);
  const call = (id: number) =>
    line({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "ping", arguments: {} },
    });
  let next = 1;
  const batch = (count: number) => {
    let text = "";
    for (let i = 0; i < count && next <= CALLS; i++) text += call(next++);
    return text;
  };
  const cpu = cpuMsOf(child.pid) ?? 0;
  const started = performance.now();
  await writer.write(encoder.encode(batch(lanes)));
  let answered = 0;
  while (answered < CALLS) {
    // Each answer read frees a lane: refill as many as came back.
    await answers(1);
    answered++;
    let more = 0;
    while (buffer.indexOf("\n") >= 0 && answered < CALLS) {
      await answers(1);
      answered++;
      more++;
    }
    const text = batch(more + 1);
    if (text !== "") await writer.write(encoder.encode(text));
  }
  const elapsed = performance.now() - started;
  const used = (cpuMsOf(child.pid) ?? 0) - cpu;
  await writer.close();
  await child.status;
  return {
    transport,
    lanes,
    callsPerSecond: Math.round(CALLS / elapsed * 1000),
    cpuUsPerCall: Math.round(used / CALLS * 1000),
  };
}

const rows: Run[] = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const lanes of LANES) {
      for (
        const transport of round % 2
          ? ["sdk", "kit", "kitasync"]
          : ["kitasync", "kit", "sdk"]
      ) {
        rows.push(await run(transport, lanes));
      }
    }
  }
} finally {
  cleanUp();
}
console.log(
  `\nstdio transport, ${CALLS} tools/call per row (Deno ${Deno.version.deno})`,
);
console.table(rows);
const by = (transport: string, lanes: number) =>
  rows.filter((r) => r.transport === transport && r.lanes === lanes)
    .map((r) => r.cpuUsPerCall).sort((a, b) => a - b);
for (const lanes of LANES) {
  console.log(
    `${lanes} in flight: CPU µs/call sdk ${by("sdk", lanes).join(", ")}; kit ${
      by("kit", lanes).join(", ")
    }; kitasync ${by("kitasync", lanes).join(", ")}`,
  );
}
