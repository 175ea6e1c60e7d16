// The MCP SDK's stdio client transport, apart from platform/mcp_sdk.ts: tests
// and benches spawn servers with it, while the daemon's gateway has its own
// (tools/kit/transport/stdio_client.ts). It imports cross-spawn, a CommonJS
// package, and node:child_process: about 2 MiB of RSS in every process that
// loads it, so no product module does.

// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.d.ts"
export { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
