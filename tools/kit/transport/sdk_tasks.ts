// MCP tasks on one SDK server: a task-augmented tools/call answers a
// CreateTaskResult at once and runs the same call (runToolCall: policy,
// audit, output check) in the background; tasks/get, tasks/result,
// tasks/list and tasks/cancel read the host's TaskBoard as the caller.

import {
  type CallToolResult,
  CancelTaskRequestSchema,
  type CreateTaskResult,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  type LoggingLevel,
  McpError,
  type ProgressToken,
  type ServerCapabilities,
} from "../../../platform/mcp_sdk_types.ts";
import type { Server } from "../../../platform/mcp_sdk_server.ts";
import type { AnyServerSpec } from "../mod.ts";
import type { HostedServer } from "../host.ts";
import { runToolCall, toolCatalog } from "../tool_call.ts";
import { runsTasks, type TaskBoard } from "../tasks.ts";
import { taskOf } from "../task_records.ts";
import { callerOf } from "./identity.ts";
import { type RequestExtra, sdkCallContext } from "./sdk_call.ts";

/** What a server declares when it has tools that run as tasks (the gateway: its routed ones may). */
export function tasksCapability(
  spec: AnyServerSpec,
): ServerCapabilities["tasks"] | undefined {
  return runsTasks(spec)
    ? { list: {}, cancel: {}, requests: { tools: { call: {} } } }
    : undefined;
}

/** A tool's `execution.taskSupport`: its definition's, or a routed tool's listing's. */
async function taskSupportOf(
  host: HostedServer,
  name: string,
): Promise<"optional" | "required" | "forbidden" | undefined> {
  const own = toolCatalog(host).get(name);
  if (own) return own.def.taskSupport;
  const dynamic = host.dynamicTools();
  await dynamic?.refresh?.(name);
  return dynamic?.list().find((tool) => tool.name === name)?.execution
    ?.taskSupport;
}

/** A plain call of a tool that must run as a task is refused as the spec says (-32601). */
export function refuseUntasked(host: HostedServer, name: string): void {
  if (toolCatalog(host).get(name)?.def.taskSupport === "required") {
    throw new McpError(
      ErrorCode.MethodNotFound,
      `Tool "${name}" runs only as a task (execution.taskSupport "required"): call it with params.task`,
    );
  }
}

function boardOf(host: HostedServer): TaskBoard {
  const board = host.tasks;
  if (board === undefined) {
    throw new McpError(
      ErrorCode.InternalError,
      `Server "${host.id}" is not running (phase ${host.phase.phase}): it keeps no tasks now`,
    );
  }
  return board;
}

/**
 * A task-augmented tools/call: the task is created, its call started in the
 * background with its own abort signal, and its handle answered at once.
 */
export async function startTask(options: {
  server: Server;
  host: HostedServer;
  extra: RequestExtra;
  name: string;
  args: Record<string, unknown>;
  ttl: number | undefined;
  progressToken: ProgressToken | undefined;
  connection: string;
  minLevel(): LoggingLevel | undefined;
}): Promise<CreateTaskResult> {
  const { server, host, extra, name } = options;
  const board = boardOf(host);
  const support = await taskSupportOf(host, name);
  if (support !== "optional" && support !== "required") {
    throw new McpError(
      ErrorCode.MethodNotFound,
      `Tool "${name}" on server "${host.id}" does not run as a task (its listing declares no execution.taskSupport); call it without params.task`,
    );
  }
  const record = await board.create({
    server: host.id,
    tool: name,
    caller: callerOf(extra.authInfo?.extra),
    ttl: options.ttl,
  });
  board.run(
    record,
    async (signal, control): Promise<CallToolResult> => {
      const { call, end } = sdkCallContext({
        server,
        host,
        extra,
        tool: name,
        progressToken: options.progressToken,
        minLevel: options.minLevel,
        task: { signal, control },
      });
      try {
        return await runToolCall(host, {
          connection: options.connection,
          name,
          args: options.args,
          call,
          logSession: extra.sessionId,
        });
      } finally {
        await end();
      }
    },
    (task) =>
      server.notification({
        method: "notifications/tasks/status",
        params: task,
      })
        .catch(() => {}), // the client left: it polls, or not
  );
  return {
    task: taskOf(record),
    _meta: {
      "io.modelcontextprotocol/model-immediate-response":
        `${name} runs as task ${record.taskId}; its result comes with tasks/result (poll tasks/get).`,
    },
  };
}

/** tasks/get, tasks/result, tasks/list and tasks/cancel, each as the caller of its request. */
export function registerTaskHandlers(server: Server, host: HostedServer): void {
  server.setRequestHandler(
    GetTaskRequestSchema,
    (request, extra) =>
      boardOf(host).get(
        host.id,
        request.params.taskId,
        callerOf(extra.authInfo?.extra),
      ),
  );
  server.setRequestHandler(
    GetTaskPayloadRequestSchema,
    (request, extra) =>
      boardOf(host).result(
        host.id,
        request.params.taskId,
        callerOf(extra.authInfo?.extra),
        extra.signal,
      ),
  );
  server.setRequestHandler(
    ListTasksRequestSchema,
    (request, extra) =>
      boardOf(host).list(
        host.id,
        callerOf(extra.authInfo?.extra),
        request.params?.cursor,
      ),
  );
  server.setRequestHandler(
    CancelTaskRequestSchema,
    (request, extra) =>
      boardOf(host).cancel(
        host.id,
        request.params.taskId,
        callerOf(extra.authInfo?.extra),
      ),
  );
}
