// The in-process task server the task tests share (tests/tools/tasks_test.ts,
// tests/security/tasks_test.ts): a `tasker` server whose `hold` waits for
// the test to release its key, `ask` elicits, `quick` has no task support,
// and (routed) an aggregator's `up__hold`; clients bound to any caller.

import { z } from "zod";
import { HostedServer } from "../../tools/kit/host.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import {
  type CallContext,
  defineServer,
  json,
  text,
  toolDefiner,
  ToolError,
} from "../../tools/kit/mod.ts";
import {
  Client,
  CreateTaskResultSchema,
  McpError,
} from "../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import type { Store } from "../../platform/store/mod.ts";
import type { Caller } from "../../platform/identity.ts";
import { capturedLog } from "../helpers.ts";

/** Gates the `hold` calls wait on, by key; and what each call saw. */
export class Gates {
  readonly #open = new Map<string, PromiseWithResolvers<void>>();
  readonly aborted = new Set<string>();
  readonly started = new Set<string>();

  gate(key: string): PromiseWithResolvers<void> {
    let gate = this.#open.get(key);
    if (!gate) {
      gate = Promise.withResolvers<void>();
      this.#open.set(key, gate);
    }
    return gate;
  }

  release(key: string): void {
    this.gate(key).resolve();
  }

  async wait(key: string, call: CallContext): Promise<void> {
    this.started.add(key);
    const gate = this.gate(key);
    const aborted = Promise.withResolvers<never>();
    const abort = () => {
      this.aborted.add(key);
      aborted.reject(new ToolError(`hold ${key} was aborted`));
    };
    call.signal.addEventListener("abort", abort, { once: true });
    try {
      await Promise.race([gate.promise, aborted.promise]);
    } finally {
      call.signal.removeEventListener("abort", abort);
    }
  }
}

const tool = toolDefiner<Gates>();

export function taskSpec(gates: Gates, routed = false) {
  return defineServer<Gates>({
    id: "tasker",
    namespace: "svc-tasker",
    title: "Tasker",
    version: "1.0.0",
    aggregates: routed,
    tools: [
      tool({
        name: "hold",
        description: "Waits until the test releases its key",
        input: z.object({ key: z.string() }),
        output: z.object({ key: z.string(), released: z.boolean() }),
        taskSupport: "optional",
        touches: [],
        async handle(ctx, { key }, call) {
          await ctx.wait(key, call);
          return json({ key, released: true });
        },
      }),
      tool({
        name: "ask",
        description:
          "Asks the user through the client, then answers what they said",
        input: z.object({}),
        taskSupport: "optional",
        touches: [],
        async handle(_ctx, _args, call) {
          const answer = await call.elicit({
            message: "Proceed?",
            requestedSchema: { type: "object", properties: {} },
          });
          return text(`user said ${answer.action}`);
        },
      }),
      tool({
        name: "quick",
        description: "Answers at once; no task support",
        input: z.object({}),
        touches: [],
        handle: () => Promise.resolve(text("quick")),
      }),
    ],
    start: () =>
      Promise.resolve({
        context: gates,
        // A routed tool as an aggregator adds it (the gateway's upstream tools).
        dynamicTools: routed
          ? {
            list: () => [{
              name: "up__hold",
              description: "A routed hold",
              inputSchema: { type: "object" },
              execution: { taskSupport: "optional" },
            }],
            has: (name: string) => name === "up__hold",
            async call(
              _name: string,
              args: Record<string, unknown>,
              call: CallContext,
            ) {
              const key = String(args.key);
              await gates.wait(key, call);
              return text(`routed ${key}`);
            },
          }
          : undefined,
      }),
  });
}

/** The tasker server in-process on `store` (a second host on the same store is another daemon); clients as any caller. */
export async function hosted(routed = false, store: Store = new MemoryStore()) {
  const gates = new Gates();
  const { log } = capturedLog("error");
  const host = await HostedServer.start(taskSpec(gates, routed), {
    store,
    log,
    config: {},
    dataDir: "/nonexistent/agentd-tasks-test",
  });
  const clients: Client[] = [];
  return {
    host,
    gates,
    async client(caller: Caller = {}): Promise<Client> {
      const client = new Client({ name: "tasks-test", version: "1.0.0" });
      await client.connect(await connectInProcess(host, caller));
      clients.push(client);
      return client;
    },
    async [Symbol.asyncDispose]() {
      for (const key of ["a", "b", "c", "d", "e", "p", "q", "r", "h"]) {
        gates.release(key);
      }
      await Promise.all(clients.map((client) => client.close()));
      await host.stop(5000);
    },
  };
}

/** A task-augmented tools/call: the CreateTaskResult. */
export function startTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: {
    onprogress?: (progress: { progress: number; message?: string }) => void;
  } = {},
) {
  return client.request(
    {
      method: "tools/call",
      params: { name, arguments: args, task: { ttl: 120_000 } },
    },
    CreateTaskResultSchema,
    options,
  );
}

/** The JSON-RPC error `promise` rejects with (fails when it answers). */
export async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error("expected a JSON-RPC error, got a result");
}
