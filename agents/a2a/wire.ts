// The two A2A wire dialects spoken at /v1/a2a/<agent>: v1.0 (ProtoJSON:
// `TASK_STATE_COMPLETED`, `ROLE_AGENT`, parts `{text}`, stream events
// `{statusUpdate}`) and 0.3 (`kind` discriminators, `completed`, `agent`,
// parts `{kind:"text",text}`, `final` on status events). Tasks are stored
// once (tasks.ts) and written out in the caller's dialect.

import { z } from "zod";
import type { JsonValue } from "../../platform/store/mod.ts";
import { describeIssues } from "../../platform/validation.ts";
import type { TaskEvent } from "./task_runs.ts";
import {
  TASK_STATES,
  type TaskMessage,
  type TaskRecord,
  type TaskState,
} from "./tasks.ts";

export type Dialect = "1.0" | "0.3";
type JsonObject = { [key: string]: JsonValue };

/** Where an A2A message carries an agentd envelope's fields between daemons. */
export const ENVELOPE_METADATA_KEY = "agentd.envelope";

const metadataSchema = z.record(z.string(), z.json());

const v1Part = z.object({
  text: z.string().optional(),
  data: z.json().optional(),
  url: z.string().optional(),
  raw: z.string().optional(),
});
const v03Part = z.object({
  kind: z.string(),
  text: z.string().optional(),
  data: z.json().optional(),
  file: z.json().optional(),
});

function messageSchema<P extends z.ZodType>(part: P) {
  return z.object({
    messageId: z.string().min(1),
    contextId: z.string().optional(),
    taskId: z.string().optional(),
    role: z.string().optional(),
    parts: z.array(part).min(1),
    metadata: metadataSchema.optional(),
  });
}

const configuration = z.object({
  historyLength: z.number().int().min(0).optional(),
  returnImmediately: z.boolean().optional(),
  blocking: z.boolean().optional(),
  acceptedOutputModes: z.array(z.string()).optional(),
});

const sendSchemas = {
  "1.0": z.object({
    message: messageSchema(v1Part),
    configuration: configuration.optional(),
    metadata: metadataSchema.optional(),
  }),
  "0.3": z.object({
    message: messageSchema(v03Part),
    configuration: configuration.optional(),
    metadata: metadataSchema.optional(),
  }),
};

/** A client's message, reduced to what a turn takes. */
export interface InboundSend {
  message_id: string;
  context_id?: string;
  task_id?: string;
  text: string;
  metadata: Record<string, JsonValue>;
  history_length?: number;
  return_immediately: boolean;
}

/** A message that breaks the protocol's rules (-32602), or carries content the agent cannot take (-32005). */
export class WireError extends Error {
  override name = "WireError";
  constructor(message: string, readonly code: -32602 | -32005) {
    super(message);
  }
}

export function parseSend(dialect: Dialect, params: unknown): InboundSend {
  const parsed = sendSchemas[dialect].safeParse(params);
  if (!parsed.success) {
    throw new WireError(describeIssues(parsed.error), -32602);
  }
  const { message, configuration } = parsed.data;
  const texts: string[] = [];
  for (const part of message.parts) {
    const text = partText(part);
    if (text === undefined) {
      throw new WireError(
        "Only text and data parts are supported (text/plain, application/json); send files as links in text",
        -32005,
      );
    }
    texts.push(text);
  }
  const text = texts.join("\n");
  if (text.trim() === "") {
    throw new WireError("The message has no text", -32602);
  }
  // v1.0 waits unless returnImmediately; 0.3 waits unless blocking is false.
  const immediate = dialect === "1.0"
    ? configuration?.returnImmediately === true
    : configuration?.blocking === false;
  return {
    message_id: message.messageId,
    context_id: message.contextId || undefined,
    task_id: message.taskId || undefined,
    text,
    metadata: { ...parsed.data.metadata, ...message.metadata },
    history_length: configuration?.historyLength,
    return_immediately: immediate,
  };
}

function partText(
  part: { kind?: string; text?: string; data?: JsonValue },
): string | undefined {
  if (part.kind !== undefined && part.kind !== "text" && part.kind !== "data") {
    return undefined;
  }
  if (typeof part.text === "string") return part.text;
  if (part.data !== undefined) return JSON.stringify(part.data);
  return undefined;
}

const V1_STATES: Record<TaskState, string> = {
  submitted: "TASK_STATE_SUBMITTED",
  working: "TASK_STATE_WORKING",
  "input-required": "TASK_STATE_INPUT_REQUIRED",
  "auth-required": "TASK_STATE_AUTH_REQUIRED",
  completed: "TASK_STATE_COMPLETED",
  failed: "TASK_STATE_FAILED",
  canceled: "TASK_STATE_CANCELED",
  rejected: "TASK_STATE_REJECTED",
};

/** A state as either dialect spells it (`TASK_STATE_COMPLETED` or `completed`). */
export function parseState(value: string): TaskState | undefined {
  for (const state of TASK_STATES) {
    if (value === state || value === V1_STATES[state]) return state;
  }
  return undefined;
}

export function stateOf(dialect: Dialect, state: TaskState): string {
  return dialect === "1.0" ? V1_STATES[state] : state;
}

function textPart(dialect: Dialect, text: string): JsonObject {
  return dialect === "1.0" ? { text } : { kind: "text", text };
}

export function messageOut(
  dialect: Dialect,
  message: TaskMessage,
  ids: { context_id: string; task_id?: string },
  metadata?: JsonObject,
): JsonObject {
  const out: JsonObject = dialect === "1.0"
    ? {
      messageId: message.message_id,
      role: message.role === "user" ? "ROLE_USER" : "ROLE_AGENT",
    }
    : { kind: "message", messageId: message.message_id, role: message.role };
  out.parts = [textPart(dialect, message.text)];
  out.contextId = ids.context_id;
  if (ids.task_id) out.taskId = ids.task_id;
  if (metadata) out.metadata = metadata;
  return out;
}

function statusOut(dialect: Dialect, task: TaskRecord): JsonObject {
  const status: JsonObject = {
    state: stateOf(dialect, task.state),
    timestamp: task.status_timestamp,
  };
  if (task.status_message) {
    status.message = messageOut(dialect, task.status_message, ids(task));
  }
  return status;
}

function ids(task: TaskRecord): { context_id: string; task_id: string } {
  return { context_id: task.context_id, task_id: task.id };
}

export interface TaskView {
  /** Most recent messages to include; undefined: all, 0: none. */
  history_length?: number;
  include_artifacts?: boolean;
}

export function taskOut(
  dialect: Dialect,
  task: TaskRecord,
  view: TaskView = {},
): JsonObject {
  const out: JsonObject = dialect === "1.0" ? {} : { kind: "task" };
  out.id = task.id;
  out.contextId = task.context_id;
  out.status = statusOut(dialect, task);
  if (view.include_artifacts !== false) {
    out.artifacts = task.artifacts.map((artifact) => ({
      artifactId: artifact.artifact_id,
      name: artifact.name,
      parts: [textPart(dialect, artifact.text)],
    }));
  }
  const history = view.history_length === undefined
    ? task.history
    : view.history_length === 0
    ? []
    : task.history.slice(-view.history_length);
  out.history = history.map((m) => messageOut(dialect, m, ids(task)));
  out.metadata = { agent: task.agent };
  return out;
}

/** The result of SendMessage: v1.0 wraps it (`{task}`), 0.3 returns the task itself. */
export function sendResultOut(
  dialect: Dialect,
  result: { task: TaskRecord; view: TaskView } | { message: JsonObject },
): JsonObject {
  if ("message" in result) {
    return dialect === "1.0" ? { message: result.message } : result.message;
  }
  const task = taskOut(dialect, result.task, result.view);
  return dialect === "1.0" ? { task } : task;
}

/** The first event of a stream: the task as submitted. */
export function taskEventOut(dialect: Dialect, task: TaskRecord): JsonObject {
  const out = taskOut(dialect, task);
  return dialect === "1.0" ? { task: out } : out;
}

export function streamEventOut(dialect: Dialect, event: TaskEvent): JsonObject {
  const base: JsonObject = {
    taskId: event.task.id,
    contextId: event.task.context_id,
  };
  if (event.kind === "status") {
    const update: JsonObject = {
      ...base,
      status: statusOut(dialect, event.task),
    };
    if (dialect === "1.0") return { statusUpdate: update };
    return { kind: "status-update", ...update, final: event.final };
  }
  const update: JsonObject = {
    ...base,
    artifact: {
      artifactId: event.artifact_id,
      name: event.name,
      parts: [textPart(dialect, event.text)],
    },
    append: event.append,
    lastChunk: event.last_chunk,
  };
  return dialect === "1.0"
    ? { artifactUpdate: update }
    : { kind: "artifact-update", ...update };
}
