// A2A tasks as the store keeps them: one record per task under
// ["task", id] and a small index entry per agent under
// ["agent_task", agent_id, seq, id], newest last, for ListTasks.

import { z } from "zod";
import type { JsonValue, Store, StoreKey } from "../../platform/store/mod.ts";

/** The A2A task states, spelled as in protocol 0.3 (v1.0 writes `TASK_STATE_<UPPER_SNAKE>`). */
export const TASK_STATES = [
  "submitted",
  "working",
  "input-required",
  "auth-required",
  "completed",
  "failed",
  "canceled",
  "rejected",
] as const;
export type TaskState = typeof TASK_STATES[number];

const TERMINAL: ReadonlySet<TaskState> = new Set([
  "completed",
  "failed",
  "canceled",
  "rejected",
]);

export function isTerminal(state: TaskState): boolean {
  return TERMINAL.has(state);
}

const taskMessageSchema = z.object({
  message_id: z.string(),
  role: z.enum(["user", "agent"]),
  text: z.string(),
});
export type TaskMessage = z.infer<typeof taskMessageSchema>;

const taskArtifactSchema = z.object({
  artifact_id: z.string(),
  name: z.string(),
  text: z.string(),
});
export type TaskArtifact = z.infer<typeof taskArtifactSchema>;

const taskSchema = z.object({
  id: z.string(),
  context_id: z.string(),
  agent_id: z.string(),
  agent: z.string(),
  state: z.enum(TASK_STATES),
  /** The agent's message that goes with the state (the answer, or why it failed). */
  status_message: taskMessageSchema.nullable(),
  status_timestamp: z.string(),
  history: z.array(taskMessageSchema),
  artifacts: z.array(taskArtifactSchema),
  /** The sender (agent name or address) when known. */
  from: z.string().nullable(),
  error: z.string().nullable(),
  /** Position in the agent's index (see `sequence`). */
  seq: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type TaskRecord = z.infer<typeof taskSchema>;

const indexSchema = z.object({
  state: z.enum(TASK_STATES),
  context_id: z.string(),
  status_timestamp: z.string(),
  /** Absent in entries written before it was indexed: such tasks match no sender filter. */
  from: z.string().nullable().optional(),
});

export interface StoredTask {
  task: TaskRecord;
  version: string;
}

export interface TaskFilter {
  context_id?: string;
  state?: TaskState;
  /** ISO time: only tasks whose status changed at or after it. */
  status_after?: string;
  /** Only tasks this sender (agent name) started. */
  from?: string;
}

export interface TaskPage {
  tasks: TaskRecord[];
  /** Empty when there is no further page. */
  next_page_token: string;
  total_size: number;
}

/** Thrown for a page token that does not come from this listing. */
export class PageTokenError extends Error {
  override name = "PageTokenError";
}

let lastSeq = 0;

/** A strictly increasing number per process (ms since epoch, fractions break ties). */
export function sequence(): number {
  const now = Date.now();
  lastSeq = now > lastSeq ? now : lastSeq + 0.001;
  return lastSeq;
}

function taskKey(id: string): StoreKey {
  return ["task", id];
}

function indexKey(task: TaskRecord): StoreKey {
  return ["agent_task", task.agent_id, task.seq, task.id];
}

function indexValue(task: TaskRecord): JsonValue {
  return {
    state: task.state,
    context_id: task.context_id,
    status_timestamp: task.status_timestamp,
    from: task.from,
  };
}

/** Scan bound for ListTasks: tasks beyond the newest this many of an agent are not listed. */
const MAX_SCAN = 10_000;

export class TaskStore {
  #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  async get(id: string): Promise<StoredTask | undefined> {
    const entry = await this.#store.get(taskKey(id));
    if (!entry) return undefined;
    return { task: taskSchema.parse(entry.value), version: entry.version };
  }

  /** Writes a new task; returns its version. */
  async create(task: TaskRecord): Promise<string> {
    const result = await this.#store.commit({
      checks: [{ key: taskKey(task.id), version: null }],
      mutations: [
        { type: "set", key: taskKey(task.id), value: task },
        { type: "set", key: indexKey(task), value: indexValue(task) },
      ],
    });
    if (!result.ok) throw new Error(`Task ${task.id} already exists`);
    return result.version;
  }

  /** Writes `task` if the stored one is still at `version`; returns the new version, or undefined when it changed meanwhile. */
  async save(task: TaskRecord, version: string): Promise<string | undefined> {
    const result = await this.#store.commit({
      checks: [{ key: taskKey(task.id), version }],
      mutations: [
        { type: "set", key: taskKey(task.id), value: task },
        { type: "set", key: indexKey(task), value: indexValue(task) },
      ],
    });
    return result.ok ? result.version : undefined;
  }

  /** An agent's tasks, newest first. `page_token` is the last task id of the previous page. */
  async list(
    agentId: string,
    filter: TaskFilter,
    page: { page_size: number; page_token?: string },
  ): Promise<TaskPage> {
    const ids: string[] = [];
    let cursor: string | undefined;
    let scanned = 0;
    do {
      const result = await this.#store.list(["agent_task", agentId], {
        reverse: true,
        limit: 1000,
        cursor,
      });
      for (const entry of result.entries) {
        scanned++;
        const id = entry.key[3];
        const index = indexSchema.safeParse(entry.value);
        if (typeof id !== "string" || !index.success) continue;
        if (matches(index.data, filter)) ids.push(id);
      }
      cursor = result.cursor ?? undefined;
    } while (cursor !== undefined && scanned < MAX_SCAN);

    let start = 0;
    if (page.page_token) {
      const at = ids.indexOf(page.page_token);
      if (at === -1) {
        throw new PageTokenError(
          `Unknown page token "${page.page_token}": pass the nextPageToken of the previous page`,
        );
      }
      start = at + 1;
    }
    const pageIds = ids.slice(start, start + page.page_size);
    const entries = await this.#store.getMany(pageIds.map(taskKey));
    const tasks: TaskRecord[] = [];
    for (const entry of entries) {
      if (entry) tasks.push(taskSchema.parse(entry.value));
    }
    const more = start + page.page_size < ids.length;
    return {
      tasks,
      next_page_token: more ? pageIds[pageIds.length - 1] ?? "" : "",
      total_size: ids.length,
    };
  }
}

function matches(
  index: z.infer<typeof indexSchema>,
  filter: TaskFilter,
): boolean {
  if (filter.context_id && index.context_id !== filter.context_id) {
    return false;
  }
  if (filter.state && index.state !== filter.state) return false;
  if (filter.from !== undefined && index.from !== filter.from) return false;
  if (
    filter.status_after &&
    Date.parse(index.status_timestamp) < Date.parse(filter.status_after)
  ) return false;
  return true;
}
