// The SDK's streamable HTTP server transport (the kit's stateless requests
// and the event store's type), without the Server and Client classes that
// platform/mcp_sdk.ts also exports (they import ajv: evaluated on first use).
// The @ts-types hints: see platform/mcp_sdk.ts.

// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/server/webStandardStreamableHttp.d.ts"
export {
  type EventStore,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
