// The task methods of the A2A JSON-RPC server (jsonrpc.ts): GetTask,
// ListTasks, CancelTask and SubscribeToTask, and their 0.3 names.

import { z } from "zod";
import type { Caller } from "../../platform/identity.ts";
import type { A2AAgent } from "./host.ts";
import type { A2AService } from "./mod.ts";
import {
  RpcError,
  type RpcId,
  type RpcReply,
  rpcResult,
  RpcStream,
} from "./rpc.ts";
import { isTerminal, type TaskRecord } from "./tasks.ts";
import type { TaskEvent } from "./task_runs.ts";
import { describeIssues } from "../../platform/validation.ts";
import {
  type Dialect,
  parseState,
  streamEventOut,
  taskEventOut,
  taskOut,
} from "./wire.ts";

/** One JSON-RPC call to one agent's endpoint. */
export interface Call {
  a2a: A2AService;
  agent: A2AAgent;
  caller: Caller;
  dialect: Dialect;
  id: RpcId;
  params: unknown;
}

const taskIdParams = z.object({
  id: z.string().min(1),
  historyLength: z.number().int().min(0).optional(),
});

const listParams = z.object({
  contextId: z.string().optional(),
  status: z.string().optional(),
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: z.string().optional(),
  historyLength: z.number().int().min(0).optional(),
  statusTimestampAfter: z.string().optional(),
  includeArtifacts: z.boolean().optional(),
});

/**
 * Whose tasks a caller sees at this agent's endpoint: all for an unbound
 * caller (the operator); for one bound to an agent, all when the endpoint is
 * that agent's own (they are its work), else only those it sent. Undefined
 * means no restriction.
 */
function senderFilter(call: Call): string | undefined {
  const bound = call.caller.agent;
  return bound === undefined || bound === call.agent.name ? undefined : bound;
}

/** The task `id` of this agent that the caller may see, or TaskNotFound (never "forbidden": ids are not confirmed to strangers). */
export async function ownTask(call: Call, id: string): Promise<TaskRecord> {
  const stored = await call.a2a.tasks.get(id);
  const from = senderFilter(call);
  if (
    !stored || stored.task.agent_id !== call.agent.id ||
    (from !== undefined && stored.task.from !== from)
  ) {
    throw new RpcError(-32001, `Task not found: ${id}`);
  }
  return stored.task;
}

export function params<T extends z.ZodType>(
  schema: T,
  value: unknown,
): z.output<T> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) {
    throw new RpcError(
      -32602,
      `Invalid params: ${describeIssues(parsed.error)}`,
    );
  }
  return parsed.data;
}

export async function getTask(call: Call): Promise<RpcReply> {
  const { id, historyLength } = params(taskIdParams, call.params);
  const task = await ownTask(call, id);
  return rpcResult(
    call.id,
    taskOut(call.dialect, task, { history_length: historyLength }),
  );
}

export async function listTasks(call: Call): Promise<RpcReply> {
  const p = params(listParams, call.params);
  const state = p.status === undefined || p.status === "TASK_STATE_UNSPECIFIED"
    ? undefined
    : parseState(p.status);
  if (
    p.status !== undefined && state === undefined &&
    p.status !== "TASK_STATE_UNSPECIFIED"
  ) {
    throw new RpcError(
      -32602,
      `Invalid params: unknown task state ${p.status}`,
    );
  }
  if (
    p.statusTimestampAfter && Number.isNaN(Date.parse(p.statusTimestampAfter))
  ) {
    throw new RpcError(
      -32602,
      "Invalid params: statusTimestampAfter is not an ISO 8601 time",
    );
  }
  const pageSize = p.pageSize ?? 50;
  const page = await call.a2a.tasks.list(call.agent.id, {
    context_id: p.contextId || undefined,
    state,
    status_after: p.statusTimestampAfter,
    from: senderFilter(call),
  }, { page_size: pageSize, page_token: p.pageToken || undefined });
  const view = {
    history_length: p.historyLength,
    include_artifacts: p.includeArtifacts ?? false,
  };
  return rpcResult(call.id, {
    tasks: page.tasks.map((task) => taskOut(call.dialect, task, view)),
    nextPageToken: page.next_page_token,
    pageSize,
    totalSize: page.total_size,
  });
}

export async function cancelTask(call: Call): Promise<RpcReply> {
  const { id } = params(taskIdParams, call.params);
  const task = await ownTask(call, id);
  if (isTerminal(task.state)) {
    throw new RpcError(
      -32002,
      `Task ${id} is ${task.state} and cannot be canceled`,
    );
  }
  const canceled = await call.a2a.runs.cancel(id);
  if (!canceled || canceled.state !== "canceled") {
    throw new RpcError(
      -32002,
      `Task ${id} ended ${
        canceled?.state ?? "meanwhile"
      } before it could be canceled`,
    );
  }
  return rpcResult(call.id, taskOut(call.dialect, canceled));
}

export async function subscribe(call: Call): Promise<RpcReply> {
  const { id } = params(taskIdParams, call.params);
  const channel = new RpcStream(call.id);
  const listener = (event: TaskEvent) => {
    channel.send(streamEventOut(call.dialect, event));
    if (event.kind === "status" && event.final) channel.close();
  };
  let unsubscribe = call.a2a.runs.subscribe(id, listener);
  try {
    const task = await ownTask(call, id);
    if (isTerminal(task.state)) {
      throw new RpcError(
        -32004,
        `Task ${id} is ${task.state}; read it with GetTask`,
      );
    }
    // Running on another daemon sharing the store: follow its record.
    unsubscribe ??= call.a2a.runs.follow(id, task.state, listener);
    channel.onCancel = unsubscribe;
    channel.open(taskEventOut(call.dialect, task));
    return channel.reply();
  } catch (error) {
    unsubscribe?.();
    throw error;
  }
}
