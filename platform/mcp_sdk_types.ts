// The MCP SDK's protocol types and zod schemas (types.js) and its transport
// and handler types: what most of the kit and the gateway import. Apart from
// the SDK's Server class, ajv and the in-memory transport
// (platform/mcp_sdk_server.ts re-exports this file and adds them), so a
// daemon at rest loads the schemas alone: its servers' SDK sides load on
// first use. The @ts-types hints: see platform/mcp_sdk.ts.

// @ts-types="../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/uriTemplate.d.ts"
export { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
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
  type Implementation,
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
