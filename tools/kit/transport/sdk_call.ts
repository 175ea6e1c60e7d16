// What a handler can do during one tools/call on an SDK server (its
// CallContext): progress, log messages, sampling, elicitation. A plain
// call's messages go out with its request; a task's on the connection
// (its request was answered at once), tagged with the task.

import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  type ProgressToken,
  RELATED_TASK_META_KEY,
  type RequestHandlerExtra,
  type ServerNotification,
  type ServerRequest,
} from "../../../platform/mcp_sdk_types.ts";
import type { Server } from "../../../platform/mcp_sdk_server.ts";
import type { HostedServer } from "../host.ts";
import {
  elicitsIn,
  NO_ELICITATION,
  NO_FORM_ELICITATION,
  NO_SAMPLING,
  NO_URL_ELICITATION,
} from "../tool_call.ts";
import { type CallContext, ElicitationUnsupported, ToolError } from "../mod.ts";
import type { TaskControl } from "../task_records.ts";
import { callerOf, linkedSessionOf } from "./identity.ts";

export type RequestExtra = RequestHandlerExtra<
  ServerRequest,
  ServerNotification
>;

/** A call quiet this long gets a progress report of the kit's own ("<tool> is running"). */
export const QUIET_PROGRESS_MS = 1000;

export interface SdkCallOptions {
  server: Server;
  host: HostedServer;
  extra: RequestExtra;
  tool: string;
  progressToken: ProgressToken | undefined;
  /** The client's `logging/setLevel`, read when a message is sent. */
  minLevel(): LoggingLevel | undefined;
  /** Set for a task's call: its own signal and its status. */
  task?: { signal: AbortSignal; control: TaskControl };
}

/**
 * The CallContext of one tools/call, and `end`, awaited when the call has
 * its result (before the answer or the task's terminal status): a quiet
 * call given a progress token reports its start after a second and its
 * finish here, even when the tool itself says nothing.
 */
export function sdkCallContext(
  options: SdkCallOptions,
): { call: CallContext; end(): Promise<void> } {
  const { server, host, extra, task } = options;
  const related = task === undefined
    ? undefined
    : { [RELATED_TASK_META_KEY]: { taskId: task.control.taskId } };
  // A task's request is answered already: its messages go out on the
  // connection, tagged with the task by hand (the SDK's `relatedTask` option
  // would queue them for tasks/result, a queue the kit does not keep).
  const notify = (notification: ServerNotification) =>
    task === undefined
      ? extra.sendNotification(notification)
      : server.notification(notification).catch(() => {}); // the client left: the task goes on
  /** A task waits for the client's answer: `input_required` meanwhile. */
  const asking = async <T>(about: string, ask: () => Promise<T>) => {
    task?.control.awaiting(about);
    try {
      return await ask();
    } finally {
      task?.control.awaiting(undefined);
    }
  };
  const reports = options.progressToken === undefined
    ? undefined
    : progressReports(options.tool, (progress, total, message) =>
      notify({
        method: "notifications/progress",
        params: {
          progressToken: options.progressToken ?? "",
          progress,
          total,
          message,
          ...(related ? { _meta: related } : {}),
        },
      }));
  const call: CallContext = {
    signal: task?.signal ?? extra.signal,
    sessionId: extra.sessionId ?? linkedSessionOf(extra.authInfo?.extra),
    caller: callerOf(extra.authInfo?.extra),
    authorization: extra.authInfo?.token || undefined,
    progress: (progress, total, message) =>
      reports?.report(progress, total, message) ?? Promise.resolve(),
    async log(level, data) {
      if (!levelEnabled(options.minLevel(), level)) return;
      await notify({
        method: "notifications/message",
        params: { level, logger: host.spec.id, data },
      });
    },
    async sample(params) {
      if (!server.getClientCapabilities()?.sampling) {
        throw new ToolError(NO_SAMPLING);
      }
      if (task === undefined) {
        return await extra.sendRequest(
          { method: "sampling/createMessage", params },
          CreateMessageResultSchema,
        );
      }
      return await asking(
        "Waiting for the client's model (sampling/createMessage)",
        () =>
          server.request(
            {
              method: "sampling/createMessage",
              params: { ...params, _meta: { ...params._meta, ...related } },
            },
            CreateMessageResultSchema,
          ),
      );
    },
    async elicit(params) {
      const declared = server.getClientCapabilities()?.elicitation;
      const mode = params.mode ?? "form";
      if (!elicitsIn(declared, mode)) {
        throw new ElicitationUnsupported(
          mode === "url"
            ? NO_URL_ELICITATION
            : declared === undefined
            ? NO_ELICITATION
            : NO_FORM_ELICITATION,
        );
      }
      if (task === undefined) {
        return await extra.sendRequest(
          { method: "elicitation/create", params },
          ElicitResultSchema,
        );
      }
      return await asking(
        `Waiting for the user's answer: ${clip(params.message, 300)}`,
        () =>
          server.request(
            {
              method: "elicitation/create",
              params: { ...params, _meta: { ...params._meta, ...related } },
            },
            ElicitResultSchema,
          ),
      );
    },
    ...(elicitsIn(server.getClientCapabilities()?.elicitation, "url")
      ? {
        async elicitationComplete(elicitationId: string) {
          await notify({
            method: "notifications/elicitation/complete",
            params: { elicitationId },
          });
        },
      }
      : {}),
    releaseStream() {
      if (task === undefined) extra.closeSSEStream?.();
    },
  };
  if (task !== undefined) call.awaiting = task.control.awaiting;
  return { call, end: () => reports?.end() ?? Promise.resolve() };
}

/**
 * One call's progress reports, increasing as the spec requires: the tool's
 * own; one of the kit's when the call is quiet for a second ("<tool> is
 * running"), and then a last one when it ends ("<tool> finished") unless
 * the tool's own reports reached their total. A quick call sends none.
 */
export function progressReports(
  tool: string,
  send: (progress: number, total?: number, message?: string) => Promise<void>,
): {
  report(progress: number, total?: number, message?: string): Promise<void>;
  end(): Promise<void>;
} {
  let last: number | undefined;
  let lastTotal: number | undefined;
  let pinged = false;
  let ended = false;
  const report = async (
    progress: number,
    total?: number,
    message?: string,
  ) => {
    if (ended) return;
    // A report not past the last (a second "0") still says something: nudged forward.
    const value = last === undefined || progress > last
      ? progress
      : last + 0.001;
    last = value;
    lastTotal = total;
    await send(value, total, message);
  };
  const timer = setTimeout(() => {
    if (last !== undefined) return;
    pinged = true;
    report(0, undefined, `${tool} is running`).catch(() => {});
  }, QUIET_PROGRESS_MS);
  return {
    report,
    async end() {
      clearTimeout(timer);
      const reachedTotal = lastTotal !== undefined && last !== undefined &&
        last >= lastTotal;
      if (ended || !pinged || last === undefined || reachedTotal) {
        ended = true;
        return;
      }
      const done = last + 1;
      await report(done, done, `${tool} finished`).catch(() => {});
      ended = true;
    },
  };
}

const LEVELS = LoggingLevelSchema.options;

function levelEnabled(
  min: LoggingLevel | undefined,
  level: LoggingLevel,
): boolean {
  return min === undefined || LEVELS.indexOf(level) >= LEVELS.indexOf(min);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
