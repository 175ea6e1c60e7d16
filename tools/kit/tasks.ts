// MCP tasks (2025-11-25): a tools/call a client asked to run as a task gets
// a handle at once and runs here in the background; its state and result
// live in the daemon's store, so any daemon on that store answers tasks/get,
// tasks/result and tasks/list, and a task whose daemon died is `failed` with
// the reason instead of `working` for ever. Each task belongs to its caller:
// an agent sees only its own, the operator sees all.
//
// Store layout (the board's slice): ["task", id] → TaskRecord; ["result", id]
// → the answer once terminal. Ids begin with their creation time, so a
// listing is in creation order and the TTL sweep reads oldest first.

import {
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  type Task,
} from "../../platform/mcp_sdk_types.ts";
import {
  encodeCursor,
  type JsonValue,
  type Store,
  validateKey,
} from "../../platform/store/mod.ts";
import type { Logger } from "../../platform/log.ts";
import type { Caller } from "../../platform/identity.ts";
import { deadLease, type Lease } from "../../platform/leases.ts";
import { messageOf } from "../../platform/errors.ts";
import { callerName } from "./policy/guard.ts";
import { TaskCancelled } from "./task_cancelled.ts";
import type { AnyServerSpec } from "./mod.ts";
import {
  asJson,
  failedOutcome,
  failedResult,
  failureOf,
  isTerminal,
  notFound,
  Outcome,
  owns,
  rpcErrorOf,
  type TaskControl,
  taskOf,
  TaskRecord,
  type TaskRow,
  type TaskStatus,
} from "./task_records.ts";

/** A task is kept this long unless its client asks for another ttl (within the bounds below). */
export const TASK_TTL_MS = 3_600_000;
const MIN_TTL_MS = 60_000;
const MAX_TTL_MS = 86_400_000;
/** What tasks/get suggests between polls; a waiting tasks/result reads the store this often for a task another daemon runs. */
export const POLL_INTERVAL_MS = 1000;
/** Leases of tasks running here are renewed this often; one not renewed for three times as long is a dead process's. */
export const TASK_LEASE_RENEW_MS = 10_000;
/** Expired tasks are swept at most this often (on a create). */
const SWEEP_EVERY_MS = 60_000;
const PAGE = 50;
/** A tasks/list cursor: `tasks.` and the store's own (base64url). */
const CURSOR = /^tasks\.([A-Za-z0-9_-]+={0,2})$/;
/** Tasks one caller may have running in this process at once (the spec asks for a limit). */
export const MAX_RUNNING_PER_CALLER = 64;

/** Whether a server has tools that run as tasks (an aggregator's routed ones may). */
export function runsTasks(spec: AnyServerSpec): boolean {
  return spec.aggregates === true ||
    spec.tools.some((def) => def.taskSupport !== undefined);
}

export class TaskBoard {
  /** This board's leases name it: a UUID per process. */
  readonly instanceId: string = crypto.randomUUID();
  readonly #store: Store;
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly #renewMs: number;
  readonly #host = Deno.hostname();
  readonly #running = new Map<
    string,
    { server: string; caller: string; controller: AbortController }
  >();
  /** Waiters for a change of one task made in this process. */
  readonly #changed = new Map<string, Set<() => void>>();
  #renewer: ReturnType<typeof setInterval> | undefined;
  #lastSweep = 0;
  #lastIdTime = 0;
  #started: Promise<void> | undefined;

  constructor(options: {
    store: Store;
    log: Logger;
    clock?: () => number;
    renewMs?: number;
  }) {
    this.#store = options.store;
    this.#log = options.log.child({ component: "tasks" });
    this.#clock = options.clock ?? Date.now;
    this.#renewMs = options.renewMs ?? TASK_LEASE_RENEW_MS;
  }

  /**
   * Fails the tasks a dead daemon left `working` or `input_required` (a
   * restart on the same store) and drops expired ones. Once per board.
   */
  start(): Promise<void> {
    return this.#started ??= this.#sweep().catch((error) =>
      this.#log.warn("task_sweep_failed", { error: messageOf(error) })
    );
  }

  /** A new task of `caller`, `working`, held by this process (run it with `run`). */
  async create(spec: {
    server: string;
    tool: string;
    caller: Caller;
    ttl?: number | null;
  }): Promise<TaskRecord> {
    const caller = callerName(spec);
    const running =
      [...this.#running.values()].filter((task) => task.caller === caller)
        .length;
    if (running >= MAX_RUNNING_PER_CALLER) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Too many tasks running for ${caller} (${MAX_RUNNING_PER_CALLER}): wait for some to end or cancel them (tasks/cancel)`,
      );
    }
    const now = this.#clock();
    const at = new Date(now).toISOString();
    const ttl = Math.min(
      MAX_TTL_MS,
      Math.max(MIN_TTL_MS, spec.ttl ?? TASK_TTL_MS),
    );
    const record: TaskRecord = {
      // Time first (sortable), then 122 random bits: unguessable.
      taskId: `${
        this.#idTime(now).toString(36).padStart(9, "0")
      }-${crypto.randomUUID()}`,
      status: "working",
      statusMessage: `${spec.tool} is running`,
      createdAt: at,
      lastUpdatedAt: at,
      ttl,
      pollInterval: POLL_INTERVAL_MS,
      server: spec.server,
      tool: spec.tool,
      caller,
      lease: this.#lease(),
    };
    await this.#store.commit({
      mutations: [{
        type: "set",
        key: ["task", record.taskId],
        value: record,
        newKey: true,
      }],
    });
    this.#log.info("task_created", {
      task: record.taskId,
      server: record.server,
      tool: record.tool,
      caller: record.caller,
    });
    if (now - this.#lastSweep > SWEEP_EVERY_MS) {
      this.#lastSweep = now;
      void this.#sweep().catch((error) =>
        this.#log.warn("task_sweep_failed", { error: messageOf(error) })
      );
    }
    return record;
  }

  /**
   * Runs `work` as the task in the background: its own abort signal (a
   * tasks/cancel, a shutdown), its answer stored when it ends, `changed`
   * told of each status change.
   */
  run(
    record: TaskRecord,
    work: (
      signal: AbortSignal,
      control: TaskControl,
    ) => Promise<CallToolResult>,
    changed?: (task: Task) => void,
  ): void {
    const id = record.taskId;
    const controller = new AbortController();
    this.#running.set(id, {
      server: record.server,
      caller: record.caller,
      controller,
    });
    this.#renew();
    const tell = (next: TaskRecord | undefined) => {
      if (next && changed) {
        try {
          changed(taskOf(next));
        } catch {
          // a listener's failure is not the task's
        }
      }
    };
    // Status changes of one task are written in the order they happen.
    let writes: Promise<void> = Promise.resolve();
    const control: TaskControl = {
      taskId: id,
      awaiting: (reason) => {
        writes = writes.then(() =>
          this.#update(id, (current) => {
            if (isTerminal(current.status)) return undefined;
            const status = reason === undefined ? "working" : "input_required";
            if (current.status === status) return undefined;
            return this.#moved(
              current,
              status,
              reason ?? `${record.tool} is running`,
            );
          })
        ).then(
          tell,
          (error) =>
            this.#log.warn("task_update_failed", {
              task: id,
              error: messageOf(error),
            }),
        );
      },
    };
    void (async () => {
      let outcome: Outcome;
      try {
        outcome = { result: await work(controller.signal, control) };
      } catch (error) {
        outcome = { error: rpcErrorOf(error) };
      }
      await writes;
      const failed = "error" in outcome || outcome.result.isError === true;
      const next = await this.#update(id, (current) => {
        if (isTerminal(current.status)) return undefined; // cancelled stays cancelled
        return this.#moved(
          current,
          failed ? "failed" : "completed",
          failed ? failureOf(outcome) : `${record.tool} completed`,
        );
      }, [{ key: ["result", id], value: asJson(outcome) }]).catch((error) => {
        this.#log.error("task_store_failed", {
          task: id,
          error: messageOf(error),
        });
        return undefined;
      });
      // Held until its end is written: meanwhile no reader takes it for a dead daemon's.
      this.#running.delete(id);
      this.#renew();
      tell(next);
      this.#log.info("task_ended", {
        task: id,
        tool: record.tool,
        status: next?.status ?? "cancelled",
      });
    })();
  }

  /** The task as `viewer` may see it; not found (-32602) when it is not theirs. */
  async get(server: string, id: string, viewer: Caller): Promise<Task> {
    return taskOf(await this.#visible(server, id, viewer));
  }

  /** Blocks until the task is terminal, then answers what its tools/call would have (spec: tasks/result). */
  async result(
    server: string,
    id: string,
    viewer: Caller,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    for (;;) {
      const record = await this.#visible(server, id, viewer);
      if (isTerminal(record.status)) return await this.#outcome(record);
      const changed = this.#nextChange(id);
      // A task another daemon runs changes only in the store: read it again after a poll interval.
      const timer = Promise.withResolvers<void>();
      const handle = setTimeout(timer.resolve, record.pollInterval);
      const aborted = Promise.withResolvers<never>();
      const abort = () =>
        aborted.reject(
          new McpError(ErrorCode.InvalidRequest, "Request cancelled"),
        );
      signal.addEventListener("abort", abort, { once: true });
      try {
        if (signal.aborted) abort();
        await Promise.race([changed.promise, timer.promise, aborted.promise]);
      } finally {
        clearTimeout(handle);
        changed.dispose();
        signal.removeEventListener("abort", abort);
      }
    }
  }

  /** `viewer`'s tasks of `server`, newest first, a page at a time. */
  async list(
    server: string,
    viewer: Caller,
    cursor?: string,
  ): Promise<{ tasks: Task[]; nextCursor?: string }> {
    let from: string | undefined;
    if (cursor !== undefined) {
      // Ours wrap the store's: anything else is refused as the spec says.
      const store = CURSOR.exec(cursor)?.[1];
      if (store === undefined) {
        throw new McpError(
          ErrorCode.InvalidParams,
          "Invalid cursor: pass the nextCursor of a previous tasks/list unchanged",
        );
      }
      from = store;
    }
    const { rows, next } = await this.#page(
      (record) => record.server === server && owns(viewer, record),
      from,
    );
    const out: { tasks: Task[]; nextCursor?: string } = {
      tasks: rows.map(taskOf),
    };
    if (next !== null) out.nextCursor = `tasks.${next}`;
    return out;
  }

  /** Cancels a task not yet terminal: `cancelled` before the answer, its work aborted where it runs here. */
  async cancel(server: string, id: string, viewer: Caller): Promise<Task> {
    const record = await this.#visible(server, id, viewer);
    if (isTerminal(record.status)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Cannot cancel task: already in terminal status '${record.status}'`,
      );
    }
    const next = await this.#update(
      id,
      (current) =>
        isTerminal(current.status) ? undefined : this.#moved(
          current,
          "cancelled",
          `Cancelled by ${callerName({ caller: viewer })}`,
        ),
    );
    const running = this.#running.get(id);
    running?.controller.abort(new TaskCancelled());
    const now = next ?? await this.#visible(server, id, viewer);
    if (now.status !== "cancelled") {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Cannot cancel task: already in terminal status '${now.status}'`,
      );
    }
    this.#log.info("task_cancelled", {
      task: id,
      by: callerName({ caller: viewer }),
    });
    return taskOf(now);
  }

  /** The newest tasks `viewer` may see, across servers (the /admin and dashboard views). */
  async rows(viewer: Caller, limit = 100): Promise<TaskRow[]> {
    const { rows } = await this.#page(
      (record) => owns(viewer, record),
      undefined,
      limit,
    );
    return rows.map((record) => ({
      id: record.taskId,
      server: record.server,
      tool: record.tool,
      status: record.status,
      message: record.statusMessage,
      caller: record.caller,
      created: record.createdAt,
      updated: record.lastUpdatedAt,
    }));
  }

  /** Tasks running in this process (shutdown waits for them with the other calls). */
  get runningCount(): number {
    return this.#running.size;
  }

  /**
   * `server` stops: its tasks still running here are `failed` (the reason
   * says so) and aborted. With no server left running tasks, leases stop.
   */
  async stopServer(server: string): Promise<void> {
    const mine = [...this.#running].filter(([, task]) =>
      task.server === server
    );
    for (const [id, task] of mine) {
      await this.#update(
        id,
        (current) =>
          isTerminal(current.status) ? undefined : this.#moved(
            current,
            "failed",
            "The daemon shut down while this task was working; call the tool again",
          ),
        [{
          key: ["result", id],
          value: failedOutcome(
            "The daemon shut down while this task was working; call the tool again",
          ),
        }],
      ).catch((error) =>
        this.#log.warn("task_update_failed", {
          task: id,
          error: messageOf(error),
        })
      );
      task.controller.abort("The daemon is shutting down");
      this.#running.delete(id);
    }
    this.#renew();
  }

  // ---- inside ---------------------------------------------------------------

  /** The time part of a new id: increasing within this process, so its tasks list in creation order. */
  #idTime(now: number): number {
    this.#lastIdTime = Math.max(now, this.#lastIdTime + 1);
    return this.#lastIdTime;
  }

  #lease(): Lease {
    return {
      owner: this.instanceId,
      host: this.#host,
      pid: Deno.pid,
      heartbeat_at: new Date(this.#clock()).toISOString(),
    };
  }

  #moved(
    record: TaskRecord,
    status: TaskStatus,
    message: string,
  ): TaskRecord {
    return {
      ...record,
      status,
      statusMessage: message,
      lastUpdatedAt: new Date(this.#clock()).toISOString(),
      lease: isTerminal(status) ? null : record.lease,
    };
  }

  /** Renews the leases of tasks running here while there are any. */
  #renew(): void {
    if (this.#running.size === 0) {
      clearInterval(this.#renewer);
      this.#renewer = undefined;
      return;
    }
    this.#renewer ??= setInterval(() => {
      for (const [id, task] of this.#running) {
        void this.#update(
          id,
          (current) => {
            // Cancelled (or failed) through another daemon: the work stops here too.
            if (isTerminal(current.status)) {
              task.controller.abort(
                current.status === "cancelled"
                  ? new TaskCancelled("The task is cancelled")
                  : `The task is ${current.status}`,
              );
              return undefined;
            }
            return current.lease?.owner !== this.instanceId
              ? undefined
              : { ...current, lease: this.#lease() };
          },
          [],
          false,
        ).catch((error) =>
          this.#log.warn("task_lease_failed", {
            task: id,
            error: messageOf(error),
          })
        );
      }
    }, this.#renewMs);
  }

  /**
   * Applies `change` to the stored record with an optimistic check (another
   * daemon may write it too); undefined when there is no such task or
   * `change` leaves it as it is.
   */
  async #update(
    id: string,
    change: (record: TaskRecord) => TaskRecord | undefined,
    more: { key: (string | number)[]; value: JsonValue }[] = [],
    notify = true,
  ): Promise<TaskRecord | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const entry = await this.#store.get(["task", id]);
      if (entry === null) return undefined;
      const parsed = TaskRecord.safeParse(entry.value);
      if (!parsed.success) return undefined;
      const next = change(parsed.data);
      if (next === undefined) return undefined;
      const result = await this.#store.commit({
        checks: [{ key: entry.key, version: entry.version }],
        mutations: [
          ...more.map(({ key, value }) => ({
            type: "set" as const,
            key,
            value,
          })),
          { type: "set", key: ["task", id], value: next },
        ],
      });
      if (result.ok) {
        if (notify) this.#fire(id);
        return next;
      }
    }
    throw new Error(`Cannot update task ${id}: it kept changing under us`);
  }

  #fire(id: string): void {
    const waiters = this.#changed.get(id);
    if (!waiters) return;
    this.#changed.delete(id);
    for (const wake of waiters) wake();
  }

  #nextChange(id: string): { promise: Promise<void>; dispose(): void } {
    const { promise, resolve } = Promise.withResolvers<void>();
    let waiters = this.#changed.get(id);
    if (!waiters) {
      waiters = new Set();
      this.#changed.set(id, waiters);
    }
    waiters.add(resolve);
    return {
      promise,
      dispose: () => {
        const set = this.#changed.get(id);
        set?.delete(resolve);
        if (set?.size === 0) this.#changed.delete(id);
      },
    };
  }

  /** The record, if it exists, is not expired, belongs to `server` and `viewer` may see it. */
  async #visible(
    server: string,
    id: string,
    viewer: Caller,
  ): Promise<TaskRecord> {
    if (id.length > 200) throw notFound(id);
    const entry = await this.#store.get(["task", id]);
    const parsed = entry === null
      ? undefined
      : TaskRecord.safeParse(entry.value);
    const record = parsed?.success ? parsed.data : undefined;
    if (
      record === undefined || record.server !== server ||
      !owns(viewer, record) || this.#expired(record)
    ) {
      throw notFound(id);
    }
    return await this.#settleDead(record) ?? record;
  }

  #expired(record: TaskRecord): boolean {
    return Date.parse(record.createdAt) + record.ttl < this.#clock();
  }

  /** A task not terminal whose runner died is `failed` now, saying why (undefined: it is alive). */
  async #settleDead(record: TaskRecord): Promise<TaskRecord | undefined> {
    if (isTerminal(record.status) || this.#running.has(record.taskId)) {
      return undefined;
    }
    const lease = record.lease;
    // This board's own (created, about to run) is alive.
    if (lease?.owner === this.instanceId) return undefined;
    const dead = lease === null ? "stale" : deadLease(lease, {
      staleMs: 3 * this.#renewMs,
      host: this.#host,
      nowMs: this.#clock(),
    });
    if (dead === undefined) return undefined;
    const was = record.status === "input_required"
      ? `waited for input (${record.statusMessage ?? "an answer"})`
      : "was working";
    const message = dead === "process_gone"
      ? `The daemon restarted while this task ${was}; call ${record.tool} again`
      : `The daemon running this task stopped answering (no heartbeat since ${
        lease?.heartbeat_at ?? "its start"
      }) while it ${was}; call ${record.tool} again`;
    const next = await this.#update(
      record.taskId,
      (current) =>
        isTerminal(current.status) ||
          current.lease?.heartbeat_at !== lease?.heartbeat_at
          ? undefined
          : this.#moved(current, "failed", message),
      [{ key: ["result", record.taskId], value: failedOutcome(message) }],
    );
    if (next) {
      this.#log.warn("task_interrupted", {
        task: record.taskId,
        tool: record.tool,
        reason: dead,
      });
    }
    return next;
  }

  async #outcome(record: TaskRecord): Promise<CallToolResult> {
    const meta = { [RELATED_TASK_META_KEY]: { taskId: record.taskId } };
    if (record.status === "cancelled") {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Task ${record.taskId} was cancelled (${
          record.statusMessage ?? "tasks/cancel"
        }): it has no result`,
      );
    }
    const entry = await this.#store.get(["result", record.taskId]);
    const parsed = entry === null ? undefined : Outcome.safeParse(entry.value);
    if (!parsed?.success) {
      return {
        ...failedResult(record.statusMessage ?? "The task has no result"),
        _meta: meta,
      };
    }
    const outcome = parsed.data;
    if ("error" in outcome) {
      throw new McpError(
        outcome.error.code,
        outcome.error.message,
        outcome.error.data,
      );
    }
    const result = CallToolResultSchema.safeParse(outcome.result);
    if (!result.success) {
      return {
        ...failedResult(record.statusMessage ?? "The task has no result"),
        _meta: meta,
      };
    }
    return { ...result.data, _meta: { ...result.data._meta, ...meta } };
  }

  /** Records `accept` keeps, newest first, at most `limit`, from `cursor`. */
  async #page(
    accept: (record: TaskRecord) => boolean,
    cursor: string | undefined,
    limit = PAGE,
  ): Promise<{ rows: TaskRecord[]; next: string | null }> {
    const rows: TaskRecord[] = [];
    let next: string | null = cursor ?? null;
    let first = true;
    /** The id of the last record read that is not in `rows` (another caller's), if the page ends there. */
    let skipped: string | undefined;
    // Each read asks for no more than the rows still wanted, so the store's
    // cursor is exactly where the page ends; tasks of others are skipped a
    // read at a time, at most 20 (a short page then, with its cursor).
    for (let read = 0; read < 20 && rows.length < limit; read++) {
      if (!first && next === null) break;
      first = false;
      let page;
      try {
        page = await this.#store.list(["task"], {
          reverse: true,
          limit: Math.min(1000, limit - rows.length),
          cursor: next ?? undefined,
        });
      } catch (error) {
        if (cursor !== undefined && read === 0) {
          throw new McpError(
            ErrorCode.InvalidParams,
            `Invalid cursor: pass the nextCursor of a previous tasks/list unchanged (${
              messageOf(error)
            })`,
          );
        }
        throw error;
      }
      for (const entry of page.entries) {
        skipped = String(entry.key.at(-1));
        const parsed = TaskRecord.safeParse(entry.value);
        if (!parsed.success || this.#expired(parsed.data)) continue;
        if (!accept(parsed.data)) continue;
        rows.push(await this.#settleDead(parsed.data) ?? parsed.data);
        skipped = undefined;
      }
      next = page.cursor;
      if (next === null) break;
    }
    // The store's cursor is the last key read: it would name another
    // caller's task. Continue below that task's creation time instead (ids
    // begin with it; tasks of one daemon never share it).
    if (next !== null && skipped !== undefined) {
      const time = skipped.split("-")[0];
      next = encodeCursor(validateKey([`${time}-`]));
    }
    return { rows, next };
  }

  /** Drops expired tasks and fails those whose daemon died. */
  async #sweep(): Promise<void> {
    this.#lastSweep = this.#clock();
    let cursor: string | undefined;
    do {
      const page = await this.#store.list(["task"], { limit: 200, cursor });
      for (const entry of page.entries) {
        const parsed = TaskRecord.safeParse(entry.value);
        const id = String(entry.key.at(-1));
        if (!parsed.success || this.#expired(parsed.data)) {
          this.#running.get(id)?.controller.abort("The task expired (ttl)");
          await this.#store.commit({
            checks: [{ key: entry.key, version: entry.version }],
            mutations: [
              { type: "delete", key: entry.key },
              { type: "delete", key: ["result", id] },
            ],
          });
          continue;
        }
        await this.#settleDead(parsed.data);
      }
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
  }
}
