// A one-tool MCP server over stdio for bench/stdio_transport_bench.ts, on the
// transport named by its argument: `sdk` (the MCP SDK's StdioServerTransport
// on Node-compatible streams), `kit` (tools/kit/transport/stdio_server.ts) or
// `kitasync` (the kit's, writing with asynchronous `Deno.stdout.write`).

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport as SdkTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { DenoStdioTransport as KitTransport } from "../tools/kit/transport/stdio_server.ts";

const server = new McpServer({ name: "ping", version: "1.0.0" });
server.registerTool(
  "ping",
  { description: "Answers pong" },
  () => ({ content: [{ type: "text", text: "pong" }] }),
);
const variant = Deno.args[0];
const transport = variant === "kitasync"
  ? new KitTransport({ output: Deno.stdout })
  : variant === "kit"
  ? new KitTransport()
  : new SdkTransport();
await server.connect(transport);
