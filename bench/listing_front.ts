// A bound for `agentd mcp memory`'s cold start, not a server: a Deno process
// that answers `initialize`, `ping` and `tools/list` on stdio from the memory
// server's generated listings (tools/memory/tool_listings.ts) and loads
// nothing else: no MCP SDK, zod, ajv, config, store or key. It shows what a
// stdio front that answers those before the rest loads could reach (see
// bench/README.md, "Cold start as a desktop client sees it").
// bench/cold_start_bench.ts spawns it beside agentd, the peer and the floor.

import { TOOL_LISTINGS } from "../tools/memory/tool_listings.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function answer(id: unknown, result: unknown): void {
  const line = JSON.stringify({ jsonrpc: "2.0", id, result }) + "\n";
  Deno.stdout.writeSync(encoder.encode(line));
}

let buffer = "";
for await (const chunk of Deno.stdin.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
    const message = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    if (message.method === "initialize") {
      answer(message.id, {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "listing-front", version: "1.0.0" },
      });
    } else if (message.method === "tools/list") {
      answer(message.id, { tools: TOOL_LISTINGS });
    } else if (message.method === "ping") answer(message.id, {});
  }
}
