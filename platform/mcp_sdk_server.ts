// The MCP SDK's server side only, for the kit's stdio path: what
// platform/mcp_sdk.ts exports, without the client (Client and its stdio and HTTP
// transports pull cross-spawn, eventsource-parser, pkce-challenge and the
// OAuth client: ~25 ms of `agentd mcp memory`'s start) or the HTTP server
// transport (mcp_sdk.ts re-exports this file and adds them), nor the SDK's
// stdio server transport (the kit has its own, tools/kit/transport/stdio_server.ts).
// Its schemas and types are platform/mcp_sdk_types.ts, which modules that need
// no Server import alone (ajv stays out of an idle daemon).
// The @ts-types hints: see platform/mcp_sdk.ts.

export * from "./mcp_sdk_types.ts";
export { Server } from "@modelcontextprotocol/sdk/server";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/inMemory.d.ts"
export { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/validation/ajv-provider.d.ts"
export { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/validation/types.d.ts"
export type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types.js";
