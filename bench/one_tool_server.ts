// The cold start floor: a one-tool MCP server on Deno and the same SDK,
// over stdio. bench/cold_start_bench.ts spawns it beside agentd.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

const server = new McpServer({ name: "floor", version: "1.0.0" });
server.registerTool(
  "ping",
  { description: "Answers pong" },
  () => ({ content: [{ type: "text", text: "pong" }] }),
);
await server.connect(new StdioServerTransport());
