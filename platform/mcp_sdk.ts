// The one import seam for the MCP SDK. Its wildcard subpath exports resolve
// types to `*.js.d.ts`, which do not exist, so Deno would silently type every
// import as `any`; the @ts-types hints point at the real declarations.

export { Server } from "@modelcontextprotocol/sdk/server";
export { Client } from "@modelcontextprotocol/sdk/client";

// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.d.ts"
export { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/server/webStandardStreamableHttp.d.ts"
export {
  type EventStore,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/stdio.d.ts"
export {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.d.ts"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/inMemory.d.ts"
export { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/uriTemplate.d.ts"
export { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/validation/ajv-provider.d.ts"
export { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv-provider.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/validation/types.d.ts"
export type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/transport.d.ts"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
export {
  CallToolRequestSchema,
  type CallToolResult,
  CallToolResultSchema,
  type ClientCapabilities,
  CompleteRequestSchema,
  type CompleteResult,
  type ContentBlock,
  type CreateMessageRequestParams,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  CreateMessageResultSchema,
  type ElicitRequestFormParams,
  ElicitRequestSchema,
  type ElicitResult,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  type GetPromptResult,
  isInitializeRequest,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type Prompt,
  type PromptMessage,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  ResourceUpdatedNotificationSchema,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
  type ToolAnnotations,
  ToolListChangedNotificationSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
