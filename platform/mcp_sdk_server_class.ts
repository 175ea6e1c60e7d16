// The MCP SDK's Server class and its JSON Schema validator, apart from the
// rest of its server side (platform/mcp_sdk_server.ts): both import ajv, a
// CommonJS package that brings up Deno's Node compatibility layer (~8 MiB of
// a daemon's idle memory). `serve` imports this module deferred (`import
// defer`, tools/kit/transport/sdk_server.ts): it is evaluated on the first
// MCP session, not at start. The @ts-types hints: see platform/mcp_sdk.ts.

export { Server } from "@modelcontextprotocol/sdk/server";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/validation/ajv-provider.d.ts"
export { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
