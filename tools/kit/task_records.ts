// What a task is in the store and on the wire (tools/kit/tasks.ts keeps
// them): its record, what tasks/result answers, how MCP shows it.

import { z } from "zod";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Task,
} from "../../platform/mcp_sdk_types.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import type { Caller } from "../../platform/identity.ts";
import { Lease } from "../../platform/leases.ts";
import { messageOf } from "../../platform/errors.ts";
import { callerName } from "./policy/guard.ts";

export const Status = z.enum([
  "working",
  "input_required",
  "completed",
  "failed",
  "cancelled",
]);
export type TaskStatus = z.infer<typeof Status>;

export const TaskRecord = z.object({
  taskId: z.string(),
  status: Status,
  statusMessage: z.string().nullable(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttl: z.number(),
  pollInterval: z.number(),
  /** The server whose tools/call made it (the gateway for its routed tools). */
  server: z.string(),
  tool: z.string(),
  /** Whose it is: `local` (the operator) or `agent:<name>`. */
  caller: z.string(),
  /** Who runs it while it is not terminal. */
  lease: Lease.nullable(),
});
export type TaskRecord = z.infer<typeof TaskRecord>;

/** What tasks/result answers for a terminal task: the call's result or its JSON-RPC error. */
export const Outcome = z.union([
  z.object({ result: z.looseObject({ content: z.array(z.unknown()) }) }),
  z.object({
    error: z.object({
      code: z.number(),
      message: z.string(),
      data: z.unknown().optional(),
    }),
  }),
]);
export type Outcome = z.infer<typeof Outcome>;

/** One row of the task views (/admin, the dashboard). */
export interface TaskRow {
  [key: string]: JsonValue;
  id: string;
  server: string;
  tool: string;
  status: TaskStatus;
  message: string | null;
  caller: string;
  created: string;
  updated: string;
}

/** What a running task can say about itself. */
export interface TaskControl {
  readonly taskId: string;
  /** The task waits for input (`input_required`, the reason as its message) or goes on (`working`). */
  awaiting(reason: string | undefined): void;
}

export function isTerminal(status: TaskStatus): boolean {
  return status === "completed" || status === "failed" ||
    status === "cancelled";
}

/** The task as MCP shows it. */
export function taskOf(record: TaskRecord): Task {
  const task: Task = {
    taskId: record.taskId,
    status: record.status,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    ttl: record.ttl,
    pollInterval: record.pollInterval,
  };
  if (record.statusMessage !== null) task.statusMessage = record.statusMessage;
  return task;
}

export function notFound(id: string): McpError {
  return new McpError(
    ErrorCode.InvalidParams,
    `Failed to retrieve task: Task not found (${
      id.slice(0, 80)
    }); tasks/list shows yours`,
  );
}

export function owns(viewer: Caller, record: TaskRecord): boolean {
  return viewer.agent === undefined ||
    record.caller === callerName({ caller: viewer });
}

export function failedResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: message }] };
}

/** What tasks/result answers for a task that ended without its tool's answer. */
export function failedOutcome(message: string): JsonValue {
  return {
    result: { isError: true, content: [{ type: "text", text: message }] },
  };
}

/** A failed task's statusMessage: the error's text, short. */
export function failureOf(outcome: Outcome): string {
  let text: string | undefined;
  if ("error" in outcome) text = outcome.error.message;
  else {
    const first = outcome.result.content[0];
    text = typeof first === "object" && first !== null &&
        "text" in first && typeof first.text === "string"
      ? first.text
      : undefined;
  }
  const message = text ?? "The tool answered an error";
  return message.length > 500 ? `${message.slice(0, 497)}...` : message;
}

/** A thrown error as the JSON-RPC error the plain call would have answered. */
export function rpcErrorOf(
  error: unknown,
): { code: number; message: string; data?: JsonValue } {
  if (error instanceof McpError) {
    const out: { code: number; message: string; data?: JsonValue } = {
      code: error.code,
      message: error.message,
    };
    const data = JsonData.safeParse(error.data);
    if (error.data !== undefined && data.success) out.data = data.data;
    return out;
  }
  return { code: ErrorCode.InternalError, message: messageOf(error) };
}

const JsonData: z.ZodType<JsonValue> = z.json();

/** A result as the store keeps it: plain JSON (what the wire carries anyway). */
export function asJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value));
}
