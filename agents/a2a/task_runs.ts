// Runs one agent turn as an A2A task: submitted → working → completed,
// failed or canceled, persisted at each step. Listeners (SSE streams) get
// the status changes and the answer as text chunks. Which turns are running
// is per-process state: on another daemon sharing the store, a task is
// canceled through its record and followed by reading it.

import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import type { A2AAgent, A2AHost } from "./host.ts";
import {
  isTerminal,
  sequence,
  type TaskRecord,
  type TaskState,
  type TaskStore,
} from "./tasks.ts";

export type TaskEvent =
  | { kind: "status"; task: TaskRecord; final: boolean }
  | {
    kind: "artifact";
    task: TaskRecord;
    artifact_id: string;
    name: string;
    text: string;
    append: boolean;
    last_chunk: boolean;
  };

export type TaskListener = (event: TaskEvent) => void;

export interface TaskStart {
  text: string;
  message_id: string;
  context_id: string;
  from?: string;
  /** Runs once the task has ended, before `done` settles and before the final event. */
  after?: (task: TaskRecord) => Promise<void>;
}

interface Run {
  controller: AbortController;
  listeners: Set<TaskListener>;
  /** Settles with the terminal record; never rejects. */
  done: Promise<TaskRecord>;
}

const ARTIFACT = { artifact_id: "response", name: "response" };
/** How often a task running on another daemon is read while followed. */
const FOLLOW_MS = 250;

export class TaskRuns {
  #host: A2AHost;
  #tasks: TaskStore;
  #log: Logger;
  #runs = new Map<string, Run>();

  constructor(host: A2AHost, tasks: TaskStore, log: Logger) {
    this.#host = host;
    this.#tasks = tasks;
    this.#log = log;
  }

  /**
   * Records a submitted task and starts its turn. `listener` is attached
   * before anything runs, so it sees every event after the returned record.
   */
  async start(
    agent: A2AAgent,
    input: TaskStart,
    listener?: TaskListener,
  ): Promise<{ task: TaskRecord; done: Promise<TaskRecord> }> {
    const now = new Date().toISOString();
    const task: TaskRecord = {
      id: crypto.randomUUID(),
      context_id: input.context_id,
      agent_id: agent.id,
      agent: agent.name,
      state: "submitted",
      status_message: null,
      status_timestamp: now,
      history: [{
        message_id: input.message_id,
        role: "user",
        text: input.text,
      }],
      artifacts: [],
      from: input.from ?? null,
      error: null,
      seq: sequence(),
      created_at: now,
      updated_at: now,
    };
    const version = await this.#tasks.create(task);
    const listeners = new Set<TaskListener>();
    if (listener) listeners.add(listener);
    const controller = new AbortController();
    const done = this.#execute(agent, task, version, input, {
      controller,
      listeners,
    });
    this.#runs.set(task.id, { controller, listeners, done });
    void done.finally(() => this.#runs.delete(task.id));
    return { task, done };
  }

  isRunning(taskId: string): boolean {
    return this.#runs.has(taskId);
  }

  /** Follows a running task; undefined when it does not run here. Returns the unsubscribe. */
  subscribe(taskId: string, listener: TaskListener): (() => void) | undefined {
    const run = this.#runs.get(taskId);
    if (!run) return undefined;
    run.listeners.add(listener);
    return () => run.listeners.delete(listener);
  }

  /**
   * Follows a task another daemon sharing the store runs: its stored record
   * is read every `everyMs`; each new state is a status event, and a task's
   * artifacts come whole before the final one. `seen` is the state already
   * sent. Returns the unsubscribe.
   */
  follow(
    taskId: string,
    seen: TaskState,
    listener: TaskListener,
    everyMs = FOLLOW_MS,
  ): () => void {
    let stopped = false;
    let last = seen;
    const poll = async (): Promise<void> => {
      while (!stopped) {
        // The store away for a moment is not the task's end: read again.
        const stored = await this.#tasks.get(taskId).catch(() => undefined);
        const task = stored?.task;
        if (task && !stopped && task.state !== last) {
          last = task.state;
          const final = isTerminal(task.state);
          for (const artifact of final ? task.artifacts : []) {
            listener({
              kind: "artifact",
              task,
              artifact_id: artifact.artifact_id,
              name: artifact.name,
              text: artifact.text,
              append: false,
              last_chunk: true,
            });
          }
          listener({ kind: "status", task, final });
          if (final) return;
        }
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    };
    void poll();
    return () => {
      stopped = true;
    };
  }

  /** The terminal record of a task running here, once it ends. */
  done(taskId: string): Promise<TaskRecord> | undefined {
    return this.#runs.get(taskId)?.done;
  }

  /**
   * Cancels a task that is not terminal: aborts its turn when it runs here,
   * else marks it canceled in the store (its turn is gone with its process).
   * Returns undefined when the task is unknown; the record as it is when it
   * is already terminal (the caller reports TaskNotCancelable).
   */
  async cancel(taskId: string): Promise<TaskRecord | undefined> {
    const run = this.#runs.get(taskId);
    if (run) {
      run.controller.abort(new Error("Canceled by the client"));
      return await run.done;
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const stored = await this.#tasks.get(taskId);
      if (!stored || isTerminal(stored.task.state)) return stored?.task;
      const task = finish(stored.task, "canceled", "Canceled by the client");
      if (await this.#tasks.save(task, stored.version)) return task;
    }
    return (await this.#tasks.get(taskId))?.task;
  }

  /** Cancels every running turn and waits until each is recorded as canceled. */
  async close(): Promise<void> {
    const runs = [...this.#runs.values()];
    for (const run of runs) {
      run.controller.abort(new Error("The daemon is shutting down"));
    }
    await Promise.all(runs.map((run) => run.done));
  }

  async #execute(
    agent: A2AAgent,
    submitted: TaskRecord,
    submittedVersion: string,
    input: TaskStart,
    run: Pick<Run, "controller" | "listeners">,
  ): Promise<TaskRecord> {
    const emit = (event: TaskEvent) => {
      for (const listener of run.listeners) {
        try {
          listener(event);
        } catch (error) {
          this.#log.warn("a2a_listener_failed", {
            task_id: submitted.id,
            error,
          });
        }
      }
    };
    let task = submitted;
    let version = submittedVersion;
    const signal = run.controller.signal;
    let streamed = "";
    let held: string | undefined;
    let sentChunk = false;
    const artifact = (text: string, append: boolean, last: boolean) =>
      emit({
        kind: "artifact",
        task,
        ...ARTIFACT,
        text,
        append,
        last_chunk: last,
      });
    try {
      await Promise.resolve(); // let start() register the run first
      const working = { ...task, state: "working" as const, ...touched() };
      version = await this.#write(working, version);
      task = working;
      emit({ kind: "status", task, final: false });
      // One chunk is held back so the last one can carry lastChunk.
      const onText = (delta: string) => {
        if (delta === "" || signal.aborted) return;
        streamed += delta;
        if (held !== undefined) {
          artifact(held, sentChunk, false);
          sentChunk = true;
        }
        held = delta;
      };
      signal.throwIfAborted();
      const output = await abortable(
        this.#host.runTurn(
          agent,
          { text: input.text, session_id: input.context_id, from: input.from },
          { signal, onText },
        ),
        signal,
      );
      if (held !== undefined && streamed === output.content) {
        artifact(held, sentChunk, true);
      } else {
        artifact(output.content, false, true);
      }
      task = finish(task, "completed", output.content);
    } catch (error) {
      task = signal.aborted
        ? finish(task, "canceled", messageOf(signal.reason))
        : finish(task, "failed", messageOf(error));
      if (!signal.aborted) {
        this.#log.warn("a2a_task_failed", {
          task_id: task.id,
          agent: agent.name,
          error: messageOf(error),
        });
      }
    }
    task = await this.#settle(task, version);
    try {
      await input.after?.(task);
    } catch (error) {
      this.#log.warn("a2a_task_after_failed", { task_id: task.id, error });
    }
    emit({ kind: "status", task, final: true });
    return task;
  }

  /** Writes a step; a task canceled elsewhere meanwhile stops the turn. */
  async #write(task: TaskRecord, version: string): Promise<string> {
    const next = await this.#tasks.save(task, version);
    if (next) return next;
    throw new Error(`Task ${task.id} was changed by another process`);
  }

  /** Writes the terminal record unless another process already ended the task (then that one wins). */
  async #settle(task: TaskRecord, version: string): Promise<TaskRecord> {
    try {
      if (await this.#tasks.save(task, version)) return task;
      const stored = await this.#tasks.get(task.id);
      if (stored && isTerminal(stored.task.state)) return stored.task;
      if (stored && await this.#tasks.save(task, stored.version)) return task;
    } catch (error) {
      this.#log.error("a2a_task_not_saved", { task_id: task.id, error });
    }
    return task;
  }
}

function touched(): { status_timestamp: string; updated_at: string } {
  const now = new Date().toISOString();
  return { status_timestamp: now, updated_at: now };
}

/** The terminal record: the agent's text (answer or reason) as status message, in history, and as the artifact on success. */
function finish(
  task: TaskRecord,
  state: TaskState,
  text: string,
): TaskRecord {
  const message = {
    message_id: crypto.randomUUID(),
    role: "agent" as const,
    text,
  };
  return {
    ...task,
    state,
    status_message: message,
    history: [...task.history, message],
    artifacts: state === "completed" ? [{ ...ARTIFACT, text }] : task.artifacts,
    error: state === "completed" ? null : text,
    ...touched(),
  };
}

/** Rejects as soon as `signal` aborts, whether or not `promise` honours it. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() =>
      signal.removeEventListener("abort", onAbort)
    );
  });
}
