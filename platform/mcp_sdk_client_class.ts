// The MCP SDK's Client class apart (it imports ajv, like the Server class:
// platform/mcp_sdk_server.ts): the gateway imports it deferred
// (tools/gateway/transports.ts), so a daemon evaluates it on its first
// upstream connection, not at start.

export { Client } from "@modelcontextprotocol/sdk/client";
