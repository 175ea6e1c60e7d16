// The one import seam for the MCP SDK. Its wildcard subpath exports resolve
// types to `*.js.d.ts`, which do not exist, so Deno would silently type every
// import as `any`; the @ts-types hints point at the real declarations.
// The server side is platform/mcp_sdk_server.ts (what `agentd mcp <server>`
// loads); this file adds the client and the HTTP server transport. The SDK's
// stdio client is platform/mcp_sdk_stdio_client.ts, for tests and benches.

export * from "./mcp_sdk_server.ts";
export * from "./mcp_sdk_client_class.ts";
export * from "./mcp_sdk_http_server.ts";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.d.ts"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
export { type RequestId } from "@modelcontextprotocol/sdk/types.js";
