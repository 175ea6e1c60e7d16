// The MCP SDK's server side only, for the kit's stdio path: what
// platform/mcp_sdk.ts exports, without the client (Client and its stdio and HTTP
// transports pull cross-spawn, eventsource-parser, pkce-challenge and the
// OAuth client: ~25 ms of `agentd mcp memory`'s start) or the HTTP server
// transport (mcp_sdk.ts re-exports this file and adds them), nor the SDK's
// stdio server transport (the kit has its own, tools/kit/transport/stdio_server.ts).
// Nor the SDK's Server class and its validator: platform/mcp_sdk_server_class.ts
// (they import ajv; the daemon evaluates them on its first MCP session).
// The @ts-types hints: see platform/mcp_sdk.ts.

// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/inMemory.d.ts"
export { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/uriTemplate.d.ts"
export { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/validation/types.d.ts"
export type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from "@modelcontextprotocol/sdk/validation/types.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/protocol.d.ts"
export type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/transport.d.ts"
export type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
export {
  CallToolRequestSchema,
  type CallToolResult,
  CallToolResultSchema,
  CancelTaskRequestSchema,
  type ClientCapabilities,
  CompleteRequestSchema,
  type CompleteResult,
  type ContentBlock,
  type CreateMessageRequestParams,
  CreateMessageRequestSchema,
  type CreateMessageResult,
  CreateMessageResultSchema,
  type CreateTaskResult,
  CreateTaskResultSchema,
  ElicitationCompleteNotificationSchema,
  type ElicitRequestFormParams,
  ElicitRequestSchema,
  type ElicitRequestURLParams,
  type ElicitResult,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  type GetPromptResult,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  type Icon,
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type ProgressToken,
  type Prompt,
  PromptListChangedNotificationSchema,
  type PromptMessage,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  RELATED_TASK_META_KEY,
  type Resource,
  ResourceListChangedNotificationSchema,
  type ResourceTemplate,
  ResourceUpdatedNotificationSchema,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Task,
  type Tool,
  type ToolAnnotations,
  ToolListChangedNotificationSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
