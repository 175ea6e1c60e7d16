// GET /v1/openapi.json: the OpenAPI 3.1 document of the /v1 API, generated
// from the same zod schemas the routes validate with.

import {
  Agent,
  AgentCreate,
  ErrorBody,
  ListQuery,
  pageOf,
  Run,
  RunListQuery,
  SendReply,
  SendRequest,
  Team,
  TeamCreate,
  TeamExecute,
} from "../../agents/schemas.ts";
import { z } from "zod";
import { VERSION } from "../../platform/version.ts";
import { A2A_OPERATIONS, type OperationSpec } from "./openapi_a2a.ts";
import { SchemaCatalog } from "./openapi_schema.ts";
import { ServerCard } from "./server_card.ts";

const Svg = z.string().describe("An SVG document");

export type { OperationSpec };

const AgentPage = pageOf(Agent, "AgentPage");
const TeamPage = pageOf(Team, "TeamPage");
const RunPage = pageOf(Run, "RunPage");

const agentId = {
  name: "agent_id",
  description: "The agent's id (`agt_…`) or its name",
};
const teamId = {
  name: "team_id",
  description: "The team's id (`team_…`) or its name",
};

const SSE_DESCRIPTION =
  "With `stream: true`: `text/event-stream`. Events, in order: `text` {step, delta} as the model " +
  "writes (text before tool calls included); `tool_call_start` {step, id, name, arguments} and " +
  "`tool_call_end` {step, id, name, is_error, result} around each tool call (between them, " +
  "`tool_call_waiting` {step, id, name, message} while the call waits for a person's approval); finally `done` " +
  "whose data is the SendReply the non-streamed call returns, or `error` " +
  "{error: {code, message, details}, status} if the turn fails after streaming began " +
  "(a failure before the first event is an ordinary JSON error response).";

export const V1_OPERATIONS: OperationSpec[] = [
  {
    method: "post",
    path: "/v1/agents",
    tag: "agents",
    summary: "Create an agent",
    description:
      "Tools are resolved now: a gateway name, a bare tool name one server has, " +
      "or a server name for all its tools; unknown or ambiguous entries are a 400 listing candidates. " +
      "Names are unique (409).",
    body: AgentCreate,
    responses: {
      201: ["The agent", Agent],
      400: [],
      403: [],
      409: [],
      503: [],
    },
  },
  {
    method: "get",
    path: "/v1/agents",
    tag: "agents",
    summary: "List agents",
    description:
      "Oldest first, in pages. An agent token sees each agent it may not act as (agents.act_as) without its `system_prompt`.",
    query: ListQuery,
    responses: { 200: ["A page of agents", AgentPage], 400: [] },
  },
  {
    method: "get",
    path: "/v1/agents/{agent_id}",
    tag: "agents",
    summary: "Get an agent",
    description:
      "An agent token reading an agent it may not act as (agents.act_as) gets it without its `system_prompt`.",
    params: [agentId],
    responses: { 200: ["The agent", Agent], 404: [] },
  },
  {
    method: "delete",
    path: "/v1/agents/{agent_id}",
    tag: "agents",
    summary: "Delete an agent",
    description:
      "Its memory namespace and conversations stay in the memory server; teams naming it fail to execute (409).",
    params: [agentId],
    responses: { 204: ["Deleted"], 403: [], 404: [] },
  },
  {
    method: "post",
    path: "/v1/agents/{agent_id}/send",
    tag: "agents",
    summary: "Send a message to an agent",
    description:
      "Runs one agent turn: system prompt + the conversation (`session_id`, or the agent's own) + the " +
      "message → model → tool calls through the gateway → model … until an answer or a bound " +
      "(`stop_reason`). A provider failure is a 502/503/504 naming the provider; the agent stays usable.",
    params: [agentId],
    body: SendRequest,
    responses: {
      200: ["The agent's reply", SendReply, SSE_DESCRIPTION],
      400: [],
      404: [],
      502: [],
      503: [],
      504: [],
    },
  },
  {
    method: "post",
    path: "/v1/teams",
    tag: "teams",
    summary: "Create a team",
    description:
      "`agents` are ids or names, resolved to ids now (unknown ones: 400). Strategies: `sequential`, " +
      "`round_robin`, `supervisor` (see the docs page). One iteration = one agent turn.",
    body: TeamCreate,
    responses: { 201: ["The team", Team], 400: [], 403: [], 409: [] },
  },
  {
    method: "get",
    path: "/v1/teams",
    tag: "teams",
    summary: "List teams",
    query: ListQuery,
    responses: { 200: ["A page of teams", TeamPage], 400: [] },
  },
  {
    method: "get",
    path: "/v1/teams/{team_id}",
    tag: "teams",
    summary: "Get a team",
    params: [teamId],
    responses: { 200: ["The team", Team], 404: [] },
  },
  {
    method: "delete",
    path: "/v1/teams/{team_id}",
    tag: "teams",
    summary: "Delete a team",
    description: "Its runs stay readable at /v1/runs.",
    params: [teamId],
    responses: { 204: ["Deleted"], 403: [], 404: [] },
  },
  {
    method: "post",
    path: "/v1/teams/{team_id}/execute",
    tag: "teams",
    summary: "Execute a task on a team",
    description:
      "Runs the team to its end and answers with the run. The run is stored from its start and " +
      "updated after every agent turn (GET /v1/runs/{run_id}); an agent failure ends it with " +
      "status `failed` and `error`; a daemon stop marks it `interrupted`.",
    params: [teamId],
    body: TeamExecute,
    responses: { 200: ["The finished run", Run], 400: [], 404: [], 409: [] },
  },
  {
    method: "get",
    path: "/v1/runs",
    tag: "runs",
    summary: "List team runs",
    query: RunListQuery,
    responses: {
      200: ["A page of runs, oldest first", RunPage],
      400: [],
      404: [],
    },
  },
  {
    method: "get",
    path: "/v1/runs/{run_id}",
    tag: "runs",
    summary: "Get a team run",
    params: [{ name: "run_id", description: "The run's id (`run_…`)" }],
    responses: { 200: ["The run", Run], 404: [] },
  },
  {
    method: "post",
    path: "/v1/runs/{run_id}/cancel",
    tag: "runs",
    summary: "Cancel a running team run",
    description:
      "Stops the run: the turn in progress is aborted and the run ends with status `cancelled`. " +
      "Run by this daemon, the answer is the ended run (200); run by another daemon on the same " +
      "store, that daemon stops it at its next lease renewal (within `agents` lease interval, 10 s) " +
      "and the answer is the run as it is now (202). Anyone who may read the run may cancel it; " +
      "an ended run answers 409. Cancelling the MCP task of the gateway's `teams__execute` does the same.",
    params: [{ name: "run_id", description: "The run's id (`run_…`)" }],
    responses: {
      200: ["The run, ended", Run],
      202: ["The run, still running: its daemon stops it", Run],
      404: [],
      409: [],
    },
  },
];

/** What the daemon answers without a token, for discovery (MCP clients, registries). */
const DISCOVERY_OPERATIONS: OperationSpec[] = [
  {
    method: "get",
    path: "/.well-known/mcp.json",
    tag: "discovery",
    summary: "The MCP server card",
    description:
      "Fields after SEP-2127 (MCP Server Cards); `servers` has one card per hosted server. No token needed.",
    responses: { 200: ["The daemon's MCP server card", ServerCard] },
  },
  {
    method: "get",
    path: "/.well-known/mcp/server-card",
    tag: "discovery",
    summary: "The MCP server card at the SEP-2127 path",
    description: "The same card as /.well-known/mcp.json.",
    responses: { 200: ["The daemon's MCP server card", ServerCard] },
  },
  {
    method: "get",
    path: "/icons/{server}.svg",
    tag: "discovery",
    summary: "A server's icon",
    params: [{ name: "server", description: "A server id, e.g. `memory`" }],
    responses: { 200: ["SVG, as serverInfo and the server card name it", Svg] },
    responseType: "image/svg+xml",
  },
  {
    method: "get",
    path: "/icons/{server}/{group}.svg",
    tag: "discovery",
    summary: "A tool group's icon",
    params: [
      { name: "server", description: "A server id, e.g. `memory`" },
      { name: "group", description: "A tool group, e.g. `entry`" },
    ],
    responses: { 200: ["SVG, as tools/list names it", Svg] },
    responseType: "image/svg+xml",
  },
];

const ERROR_TEXT: Record<number, string> = {
  403:
    "An agent's own token cannot create or delete agents and teams (use the daemon token), or act for another agent",
  400: "Invalid request: bad JSON, a missing, unknown or out-of-range field",
  404: "No such resource",
  409: "Conflict: the name is taken, or the team refers to deleted agents",
  413: "Request body over the daemon's limit (1 MiB by default)",
  415: "The body is not JSON",
  502: "The model provider answered badly",
  503: "A dependency is down: the model provider (named) or the gateway",
  504: "The model provider timed out",
};

export function openApiDocument(): Record<string, unknown> {
  const catalog = new SchemaCatalog();
  const errorRef = catalog.ref(ErrorBody, "output");
  const paths: Record<string, Record<string, unknown>> = {};
  for (
    const op of [...V1_OPERATIONS, ...A2A_OPERATIONS, ...DISCOVERY_OPERATIONS]
  ) {
    const parameters = [
      ...(op.params ?? []).map((p) => ({
        name: p.name,
        in: "path",
        required: true,
        description: p.description,
        schema: { type: "string" },
      })),
      ...(op.query ? catalog.parameters(op.query) : []),
    ];
    const responses: Record<string, unknown> = {};
    for (
      const [status, [description, schema, sse]] of Object.entries(op.responses)
    ) {
      if (description === undefined) {
        responses[status] = {
          description: ERROR_TEXT[Number(status)] ?? "Error",
          content: { "application/json": { schema: errorRef } },
        };
        continue;
      }
      const content: Record<string, unknown> = {};
      if (schema) {
        content[op.responseType ?? "application/json"] = {
          schema: catalog.ref(schema, "output"),
        };
      }
      if (sse) {
        content["text/event-stream"] = {
          schema: { type: "string", description: sse },
        };
      }
      responses[status] = {
        description: sse ? `${description}. ${sse}` : description,
        ...(Object.keys(content).length > 0 ? { content } : {}),
      };
    }
    if (op.body) {
      responses["413"] ??= {
        description: ERROR_TEXT[413],
        content: { "application/json": { schema: errorRef } },
      };
      responses["415"] ??= {
        description: ERROR_TEXT[415],
        content: { "application/json": { schema: errorRef } },
      };
    }
    paths[op.path] ??= {};
    paths[op.path][op.method] = {
      operationId: operationId(op),
      tags: [op.tag],
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(op.body
        ? {
          requestBody: {
            required: true,
            content: {
              "application/json": { schema: catalog.ref(op.body, "input") },
            },
          },
        }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "agentd /v1 API",
      version: VERSION,
      description:
        "Agents that think with model providers and act through MCP tools (via the gateway), teams, " +
        'and agent-to-agent (A2A) messaging. Errors are `{"error":{"code","message","details"}}`. ' +
        "When the daemon has a token, every request needs `Authorization: Bearer <token>`, " +
        "except discovery (the MCP server card and icons).",
    },
    servers: [{ url: "/" }],
    tags: [
      { name: "agents", description: "Agents and their messages" },
      { name: "teams", description: "Teams of agents and task execution" },
      { name: "runs", description: "Team runs" },
      { name: "a2a", description: "Agent-to-agent messaging" },
      { name: "discovery", description: "The MCP server card and icons" },
    ],
    security: [{}, { bearer: [] }],
    paths,
    components: {
      schemas: catalog.components,
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "The daemon token (AGENTD_TOKEN) or an agent token",
        },
      },
    },
  };
}

function operationId(op: OperationSpec): string {
  const words = op.summary.toLowerCase().replace(/[^a-z0-9 ]/g, "").split(" ");
  return words.map((word, i) =>
    i === 0 ? word : word[0].toUpperCase() + word.slice(1)
  )
    .join("");
}
