// CPU per no-op `tools/call` through the kit's streamable HTTP endpoint, in
// process (McpHttpEndpoint.handle with a Request, no socket, no Hono): what
// our session transport, the endpoint and the SDK's Server cost per call
// without the HTTP server's and the memory server's work around them. C
// concurrent callers in one session each send N/C POSTs one after another.
// Prints CPU µs per call (this process: user + sys), steadier than wall time
// on a shared machine; run it alternately in two trees to compare.
//
//   deno run -A bench/mcp_http_session_cpu.ts [calls] [callers]

import process from "node:process";
import { z } from "zod";
import { defineServer, text, toolDefiner } from "../tools/kit/mod.ts";
import { httpSession } from "../tests/tools/http_session.ts";

const calls = Number(Deno.args[0] ?? 20_000);
const callers = Number(Deno.args[1] ?? 16);

const tool = toolDefiner<Record<never, never>>();
const noop = defineServer<Record<never, never>>({
  id: "noop",
  namespace: "svc-noop",
  title: "No-op",
  version: "1.0.0",
  tools: [
    tool({
      name: "noop",
      description: "Answers at once",
      input: z.object({}),
      handle: () => Promise.resolve(text("ok")),
    }),
  ],
  start: () => Promise.resolve({ context: {} }),
});

await using s = await httpSession(noop);
let next = 0;

async function run(count: number): Promise<void> {
  await Promise.all(
    Array.from({ length: callers }, async () => {
      for (let i = 0; i < count / callers; i++) {
        const response = await s.inSession({
          jsonrpc: "2.0",
          id: ++next,
          method: "tools/call",
          params: { name: "noop", arguments: {} },
        });
        const body = await response.text();
        if (!body.includes('"ok"')) throw new Error(body);
      }
    }),
  );
}

await run(Math.min(4000, calls));
const before = process.cpuUsage();
const started = performance.now();
await run(calls);
const used = process.cpuUsage(before);
const elapsed = performance.now() - started;
console.log(
  `${calls} calls, ${callers} callers: ${
    Math.round(calls / elapsed * 1000)
  }/s, CPU ${((used.user + used.system) / calls).toFixed(1)} µs/call`,
);
