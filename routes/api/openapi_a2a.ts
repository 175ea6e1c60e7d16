// The A2A endpoints in the OpenAPI document: the message envelope and its
// record from the schemas agents/a2a validates with, agentd's agent card and
// A2A JSON-RPC from their documented shapes; and the operation shape both
// halves of the document use.

import { z } from "zod";
import {
  envelopeRecordSchema,
  envelopeSchema,
} from "../../agents/a2a/envelope.ts";

export interface OperationSpec {
  method: "get" | "post" | "delete";
  path: string;
  tag: string;
  summary: string;
  description?: string;
  params?: { name: string; description: string }[];
  query?: z.ZodObject;
  body?: z.ZodType;
  /** Status → [description, schema?, event-stream description?]; `[]` is the error shape. */
  responses: Record<number, [string?, z.ZodType?, string?]>;
  responseType?: string;
}

const Version = z.string().regex(/^\d+\.\d+\.\d+$/).describe(
  "Dotted three-part version",
);

export const SeedAgentCard = z.object({
  name: z.string(),
  version: Version,
  description: z.string().optional(),
  capabilities: z.array(z.string()).describe(
    "Capability names: the A2A capability flags that are on (e.g. `streaming`), then skill ids",
  ),
  protocols: z.array(z.string()).describe("Contains `a2a`"),
  endpoints: z.record(z.string(), z.string()).describe(
    "Protocol → address; `a2a` is `{base_url}/v1/a2a/<agent_name>`",
  ),
}).catchall(z.unknown()).meta({
  id: "SeedAgentCard",
  description:
    "agentd's card (`protocols`, `endpoints` and `capabilities` as a list of names); the other fields are those of an A2A v1.0 AgentCard (supportedInterfaces, skills, …)",
});

export const A2AMessage = envelopeSchema.meta({ id: "A2AMessage" });

const EnvelopeRecord = envelopeRecordSchema.meta({ id: "A2AEnvelope" });

const Accepted = z.object({
  id: z.string(),
  status: z.literal("accepted"),
}).meta({ id: "A2AAccepted" });

const InboxQuery = z.object({
  limit: z.number().int().min(1).max(100).default(50),
  cursor: z.string().optional().describe("`next_cursor` of the previous page"),
  order: z.enum(["asc", "desc"]).default("desc").describe("desc: newest first"),
});

const Inbox = z.object({
  data: z.array(EnvelopeRecord),
  next_cursor: z.string().nullable(),
}).meta({ id: "A2AInbox" });

const JsonRpcRequest = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string().describe(
    "v1.0: SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask; " +
      "0.3: message/send, message/stream, tasks/get, tasks/list, tasks/cancel",
  ),
  params: z.record(z.string(), z.unknown()).optional(),
}).meta({ id: "JsonRpcRequest" });

const JsonRpcResponse = z.object({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.unknown().optional(),
  error: z.object({
    code: z.number().int(),
    message: z.string(),
    data: z.unknown().optional(),
  }).optional(),
}).meta({ id: "JsonRpcResponse" });

const Json = z.record(z.string(), z.unknown());

const agentUrl = {
  name: "agent_url",
  description:
    "A local agent's name or id, or the URL-encoded address of a remote agent (its card is fetched)",
};
const agentName = {
  name: "agent_name",
  description: "A local agent's name (or id)",
};

export const A2A_OPERATIONS: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/a2a/{agent_url}/card",
    tag: "a2a",
    summary: "Get an agent card",
    params: [agentUrl],
    responses: {
      200: [
        "agentd's card (its A2A v1.0 AgentCard plus `protocols` and `endpoints`)",
        SeedAgentCard,
      ],
      404: [],
      502: [],
    },
  },
  {
    method: "post",
    path: "/v1/a2a/message",
    tag: "a2a",
    summary: "Send an A2A message",
    description:
      "`request` runs the receiving agent and answers with its `response` envelope; `notification`, " +
      "`response` and `error` are accepted (202) into the receiver's inbox. `to_agent` is a local " +
      "agent's name or id, or the http(s) address of a remote agent, reached over A2A.",
    body: A2AMessage,
    responses: {
      200: [
        "The recorded `response` envelope answering a `request`",
        EnvelopeRecord,
      ],
      202: [
        "Accepted into the receiver's inbox (notification, response, error)",
        Accepted,
      ],
      400: [],
      404: [],
      502: [],
      503: [],
    },
  },
  {
    method: "post",
    path: "/v1/a2a/{agent_name}",
    tag: "a2a",
    summary: "A2A JSON-RPC endpoint of an agent",
    description:
      "Standard A2A over JSON-RPC 2.0, v1.0 and 0.3 method names. Streaming methods answer with " +
      "text/event-stream of JSON-RPC responses.",
    params: [agentName],
    body: JsonRpcRequest,
    responses: {
      200: [
        "A JSON-RPC response",
        JsonRpcResponse,
        "Stream of JSON-RPC responses (streaming methods)",
      ],
      404: [],
    },
  },
  {
    method: "get",
    path: "/v1/a2a/{agent_name}/messages",
    tag: "a2a",
    summary: "Read an agent's inbox",
    description:
      "Envelopes received by the agent. A caller with an agent token reads only that agent's inbox (403).",
    params: [agentName],
    query: InboxQuery,
    responses: {
      200: ["A page of envelopes", Inbox],
      400: [],
      403: [],
      404: [],
    },
  },
  {
    method: "get",
    path: "/v1/a2a/{agent_name}/.well-known/agent-card.json",
    tag: "a2a",
    summary: "An agent's A2A card",
    params: [agentName],
    responses: {
      200: ["A2A AgentCard (v1.0; 0.3 fields for 0.3 clients)", Json],
      404: [],
    },
  },
  {
    method: "get",
    path: "/.well-known/agent-card.json",
    tag: "a2a",
    summary: "The default agent's A2A card",
    responses: { 200: ["A2A AgentCard of the default agent", Json], 404: [] },
  },
];
