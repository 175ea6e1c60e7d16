// The A2A JSON-RPC server of one agent (POST /v1/a2a/<agent>). The method
// name picks the dialect: v1.0 methods (`SendMessage`, …) get v1.0 shapes,
// 0.3 methods (`message/send`, …) get 0.3 shapes, at the same URL. An
// `A2A-Version` header, when sent, must name 1.0 or 0.3. JSON-RPC errors are
// replies like results (routes/api/a2a.ts sends both with HTTP 200, as the A2A
// SDKs expect).

import { z } from "zod";
import type { Caller } from "../../platform/identity.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { assertSender, readEnvelopeMetadata } from "./envelope.ts";
import { Forbidden } from "../errors.ts";
import type { A2AAgent } from "./host.ts";
import type { A2AService } from "./mod.ts";
import {
  RpcError,
  rpcError,
  type RpcReply,
  rpcResult,
  RpcStream,
} from "./rpc.ts";
import type { TaskListener } from "./task_runs.ts";
import {
  type Call,
  cancelTask,
  getTask,
  listTasks,
  ownTask,
  subscribe,
} from "./task_methods.ts";
import { PageTokenError, type TaskRecord } from "./tasks.ts";
import { describeIssues } from "../../platform/validation.ts";
import {
  type Dialect,
  ENVELOPE_METADATA_KEY,
  messageOut,
  parseSend,
  sendResultOut,
  streamEventOut,
  taskEventOut,
  WireError,
} from "./wire.ts";

type JsonObject = { [key: string]: JsonValue };
type Operation =
  | "send"
  | "stream"
  | "get"
  | "list"
  | "cancel"
  | "subscribe"
  | "push"
  | "extended_card";

const METHODS: Record<string, [Dialect, Operation]> = {
  SendMessage: ["1.0", "send"],
  SendStreamingMessage: ["1.0", "stream"],
  GetTask: ["1.0", "get"],
  ListTasks: ["1.0", "list"],
  CancelTask: ["1.0", "cancel"],
  SubscribeToTask: ["1.0", "subscribe"],
  GetExtendedAgentCard: ["1.0", "extended_card"],
  CreateTaskPushNotificationConfig: ["1.0", "push"],
  GetTaskPushNotificationConfig: ["1.0", "push"],
  ListTaskPushNotificationConfigs: ["1.0", "push"],
  DeleteTaskPushNotificationConfig: ["1.0", "push"],
  "message/send": ["0.3", "send"],
  "message/stream": ["0.3", "stream"],
  "tasks/get": ["0.3", "get"],
  // Not in 0.3 (it has no listing); ListTasks with 0.3 shapes.
  "tasks/list": ["0.3", "list"],
  "tasks/cancel": ["0.3", "cancel"],
  "tasks/resubscribe": ["0.3", "subscribe"],
  "agent/getAuthenticatedExtendedCard": ["0.3", "extended_card"],
  "tasks/pushNotificationConfig/set": ["0.3", "push"],
  "tasks/pushNotificationConfig/get": ["0.3", "push"],
  "tasks/pushNotificationConfig/list": ["0.3", "push"],
  "tasks/pushNotificationConfig/delete": ["0.3", "push"],
};

const envelopeSchema = z.object({
  jsonrpc: z.literal("2.0"),
  method: z.string(),
  id: z.union([z.string(), z.number(), z.null()]),
  params: z.json().optional(),
});

/**
 * Answers one JSON-RPC request addressed to `agent`: `body` as sent
 * (undefined when it could not be read), `version` the A2A-Version asked for.
 */
export async function handleJsonRpc(
  a2a: A2AService,
  agent: A2AAgent,
  request: { body: string | undefined; version?: string },
  caller: Caller,
): Promise<RpcReply> {
  let body: unknown;
  try {
    body = JSON.parse(request.body ?? "");
  } catch {
    return rpcError(
      null,
      new RpcError(-32700, "Parse error: the body is not JSON"),
    );
  }
  if (Array.isArray(body)) {
    return rpcError(
      null,
      new RpcError(-32600, "Batch requests are not supported"),
    );
  }
  const parsed = envelopeSchema.safeParse(body);
  if (!parsed.success) {
    const id = z.object({ id: z.union([z.string(), z.number()]) })
      .safeParse(body);
    return rpcError(
      id.success ? id.data.id : null,
      new RpcError(-32600, `Invalid request: ${describeIssues(parsed.error)}`),
    );
  }
  const { id, method, params } = parsed.data;
  const version = request.version?.trim();
  if (version && !/^(1|0\.3)(\.\d+)*$/.test(version)) {
    return rpcError(
      id,
      new RpcError(
        -32009,
        `A2A version ${version} is not supported; use 1.0 or 0.3`,
        { supported: ["1.0", "0.3"] },
      ),
    );
  }
  const entry = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (!entry) {
    return rpcError(id, new RpcError(-32601, `Method not found: ${method}`));
  }
  const [dialect, operation] = entry;
  const call: Call = { a2a, agent, caller, dialect, id, params };
  try {
    return await OPERATIONS[operation](call);
  } catch (error) {
    // Authorization is HTTP's to answer (403), as for the envelope route.
    if (error instanceof Forbidden) throw error;
    if (error instanceof RpcError) return rpcError(id, error);
    if (error instanceof WireError) {
      return rpcError(id, new RpcError(error.code, error.message));
    }
    if (error instanceof PageTokenError) {
      return rpcError(id, new RpcError(-32602, error.message));
    }
    a2a.log.error("a2a_rpc_failed", { method, agent: agent.name, error });
    return rpcError(
      id,
      new RpcError(-32603, "Internal error; see the daemon log"),
    );
  }
}

const OPERATIONS: Record<Operation, (call: Call) => Promise<RpcReply>> = {
  send: send,
  stream: stream,
  get: getTask,
  list: listTasks,
  cancel: cancelTask,
  subscribe: subscribe,
  push: () => {
    throw new RpcError(
      -32003,
      "Push notifications are not supported by agentd",
    );
  },
  extended_card: () => {
    throw new RpcError(-32007, "This agent has no extended agent card");
  },
};

async function send(call: Call): Promise<RpcReply> {
  const input = parseSend(call.dialect, call.params);
  const started = await begin(call, input);
  if ("message" in started) {
    return rpcResult(call.id, sendResultOut(call.dialect, started));
  }
  const view = { history_length: input.history_length };
  const task = input.return_immediately ? started.task : await started.done;
  return rpcResult(call.id, sendResultOut(call.dialect, { task, view }));
}

async function stream(call: Call): Promise<RpcReply> {
  const input = parseSend(call.dialect, call.params);
  const channel = new RpcStream(call.id);
  const started = await begin(call, input, (event) => {
    channel.send(streamEventOut(call.dialect, event));
    if (event.kind === "status" && event.final) channel.close();
  });
  if ("message" in started) {
    channel.open(sendResultOut(call.dialect, started));
    channel.close();
  } else {
    channel.open(taskEventOut(call.dialect, started.task));
  }
  return channel.reply();
}

type Begun =
  | { message: JsonObject }
  | { task: TaskRecord; done: Promise<TaskRecord> };

/**
 * Starts the task a message asks for. A message carrying an agentd envelope
 * other than a request is only recorded in the agent's inbox and answered
 * with a message; a request envelope is also recorded, then run as a task.
 */
async function begin(
  call: Call,
  input: ReturnType<typeof parseSend>,
  listener?: TaskListener,
): Promise<Begun> {
  const { a2a, agent } = call;
  let contextId = input.context_id;
  if (input.task_id) {
    const task = await ownTask(call, input.task_id);
    if (contextId && contextId !== task.context_id) {
      throw new RpcError(
        -32602,
        `contextId ${contextId} does not match task ${task.id}'s context ${task.context_id}`,
      );
    }
    throw new RpcError(
      -32004,
      `Task ${task.id} is ${task.state} and takes no more messages; send a new message with contextId ${task.context_id} to continue the conversation`,
    );
  }
  contextId ??= crypto.randomUUID();
  const envelope = readEnvelopeMetadata(input.metadata);
  if (envelope) assertSender(call.caller, envelope.from_agent);
  if (envelope && envelope.type !== "request") {
    const record = await a2a.envelopes.receive(
      { ...envelope, content: input.text },
      agent,
    );
    const message = messageOut(
      call.dialect,
      {
        message_id: crypto.randomUUID(),
        role: "agent",
        text: `Accepted ${envelope.type} ${record.id}`,
      },
      { context_id: contextId },
      {
        [ENVELOPE_METADATA_KEY]: { id: record.id, status: "accepted" },
      },
    );
    return { message };
  }
  const recorded = Promise.withResolvers<string | undefined>();
  recorded.promise.catch(() => {}); // reported by `after`, which awaits it
  const { task, done } = await a2a.runs.start(agent, {
    text: input.text,
    message_id: input.message_id,
    context_id: contextId,
    from: call.caller.agent ?? envelope?.from_agent,
    after: async (final) => {
      const id = await recorded.promise;
      if (id === undefined) return;
      await a2a.envelopes.update(id, {
        status: final.state === "completed" ? "answered" : "failed",
        error: final.error,
      });
    },
  }, listener);
  if (!envelope) {
    recorded.resolve(undefined);
  } else {
    try {
      const record = await a2a.envelopes.receive(
        { ...envelope, content: input.text },
        agent,
        { task_id: task.id },
      );
      recorded.resolve(record.id);
    } catch (error) {
      recorded.reject(error);
    }
  }
  return { task, done };
}
