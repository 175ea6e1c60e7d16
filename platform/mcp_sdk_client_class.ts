// The MCP SDK's Client class apart (it imports ajv, like the Server class:
// platform/mcp_sdk_server.ts): the gateway imports it deferred
// (tools/gateway/transports.ts), so a daemon evaluates it on its first
// upstream connection, not at start.

export { Client } from "@modelcontextprotocol/sdk/client";

// The Client validates tools' output schemas with ajv; the gateway's direct
// calls (tools/gateway/direct_calls.ts) use the same validator.
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/validation/ajv-provider.d.ts"
export { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
