// The kit end to end through an in-process MCP link (SDK client <-> SDK
// server from tools/kit/transport/sdk_server.ts): listings, argument validation, errors, the
// lifecycle, notifications, sampling and elicitation, resources, prompts
// and completion. No processes, no sockets.

import assert from "node:assert/strict";
import { z } from "zod";
import {
  Client,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  type JSONRPCMessage,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
} from "../../platform/mcp_sdk.ts";
import type { Store } from "../../platform/store/mod.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { HostedServer } from "../../tools/kit/host.ts";
import {
  type AnyServerSpec,
  defineServer,
  json,
  promptDefiner,
  type ServerDeps,
  text,
  toolDefiner,
  ToolError,
} from "../../tools/kit/mod.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import { capturedLog, type LogLine, waitFor } from "../helpers.ts";

/** What the test server lets a test observe and steer. */
class Probe {
  /** Handler executions (any tool). */
  runs = 0;
  deps: ServerDeps | undefined;
  /** Ordered milestones of the slow tool and the runtime's stop. */
  events: string[] = [];
  /** The slow tool waits for this. */
  readonly release = Promise.withResolvers<void>();
  /** Resolved once the slow tool has started. */
  readonly entered = Promise.withResolvers<void>();
}

interface KitContext {
  store: Store;
  probe: Probe;
}

const tool = toolDefiner<KitContext>();
const prompt = promptDefiner<KitContext>();

/** 150 candidates, so completion has to cap at 100. */
const TOPICS = Array.from(
  { length: 150 },
  (_, i) => `topic-${String(i).padStart(3, "0")}`,
);
const NOTE_KEYS = ["alpha", "alpine", "beta"];

const TOOL_NAMES = [
  "note_write",
  "fail",
  "slow",
  "report",
  "ask_model",
  "ask_user",
];

function kitSpec(probe: Probe) {
  return defineServer<KitContext>({
    id: "kit",
    namespace: "svc-kit",
    title: "Kit test server",
    version: "9.9.9",
    tools: [
      tool({
        name: "note_write",
        title: "Write a note",
        description: "Stores a note's text under a key.",
        input: z.object({
          key: z.string().min(1),
          text: z.string(),
          tags: z.array(z.string()).optional(),
        }),
        annotations: { destructiveHint: false, idempotentHint: true },
        async handle(ctx, args) {
          ctx.probe.runs++;
          await ctx.store.set(["notes", args.key], args.text);
          return json({ key: args.key, length: args.text.length });
        },
      }),
      tool({
        name: "fail",
        description: "Fails on purpose.",
        input: z.object({ mode: z.enum(["tool", "plain"]) }),
        async handle(ctx, args) {
          ctx.probe.runs++;
          await ctx.store.get(["locks", "x"]);
          if (args.mode === "tool") {
            throw new ToolError('Note "x" is locked', [
              { type: "text", text: "Unlock it first." },
            ]);
          }
          throw new Error("disk on fire");
        },
      }),
      tool({
        name: "slow",
        description: "Waits until the test releases it.",
        input: z.object({ label: z.string() }),
        async handle(ctx, args) {
          ctx.probe.runs++;
          ctx.probe.events.push("call:start");
          ctx.probe.entered.resolve();
          await ctx.probe.release.promise;
          ctx.probe.events.push("call:end");
          return text(`done ${args.label}`);
        },
      }),
      tool({
        name: "report",
        description: "Reports progress and logs at every level.",
        input: z.object({}),
        async handle(ctx, _args, call) {
          ctx.probe.runs++;
          await call.progress(1, 2, "half");
          await call.progress(2, 2);
          await call.log("debug", { step: "debug" });
          await call.log("info", { step: "info" });
          await call.log("warning", { step: "warning" });
          await call.log("error", { step: "error" });
          return text("reported");
        },
      }),
      tool({
        name: "ask_model",
        description: "Asks the client's model a question.",
        input: z.object({ question: z.string() }),
        async handle(ctx, args, call) {
          ctx.probe.runs++;
          const reply = await call.sample({
            messages: [{
              role: "user",
              content: { type: "text", text: args.question },
            }],
            maxTokens: 50,
          });
          return json({
            model: reply.model,
            reply: reply.content.type === "text" ? reply.content.text : "",
          });
        },
      }),
      tool({
        name: "ask_user",
        description: "Asks the user for their name.",
        input: z.object({}),
        async handle(ctx, _args, call) {
          ctx.probe.runs++;
          const answer = await call.elicit({
            message: "Your name?",
            requestedSchema: {
              type: "object",
              properties: { name: { type: "string" } },
              required: ["name"],
            },
          });
          const name = answer.content?.name;
          return json({
            action: answer.action,
            name: typeof name === "string" ? name : null,
          });
        },
      }),
    ],
    resources: [{
      uri: "kit://readme",
      name: "readme",
      title: "Read me",
      description: "A fixed text.",
      mimeType: "text/plain",
      subscribable: true,
      read: (_ctx, uri) =>
        Promise.resolve([{
          uri: uri.href,
          mimeType: "text/plain",
          text: "Hello from kit",
        }]),
    }],
    resourceTemplates: [{
      uriTemplate: "kit://notes/{key}",
      name: "note",
      description: "A note written with note_write.",
      mimeType: "text/plain",
      complete: (_ctx, variable, value) =>
        Promise.resolve(
          variable === "key"
            ? NOTE_KEYS.filter((key) => key.startsWith(value))
            : [],
        ),
      async read(ctx, uri, variables) {
        const key = String(variables.key);
        const entry = await ctx.store.get(["notes", key]);
        return [{
          uri: uri.href,
          mimeType: "text/plain",
          text: entry === null ? "(empty)" : String(entry.value),
        }];
      },
    }],
    prompts: [
      prompt({
        name: "summarize",
        description: "Summarize a topic.",
        args: z.object({
          topic: z.string().describe("What to summarize"),
          style: z.string().optional().describe("Tone of voice"),
        }),
        complete: (_ctx, argument, value) =>
          Promise.resolve(
            argument === "topic"
              ? TOPICS.filter((topic) => topic.startsWith(value))
              : [],
          ),
        get: (_ctx, args) =>
          Promise.resolve({
            messages: [{
              role: "user",
              content: {
                type: "text",
                text: `Summarize ${args.topic}` +
                  (args.style === undefined
                    ? "."
                    : ` in a ${args.style} tone.`),
              },
            }],
          }),
      }),
      prompt({
        name: "greet",
        description: "Says hello.",
        get: () =>
          Promise.resolve({
            messages: [{
              role: "user",
              content: { type: "text", text: "Hello!" },
            }],
          }),
      }),
    ],
    start(deps) {
      probe.deps = deps;
      return Promise.resolve({
        context: { store: deps.store, probe },
        health: () => ({ runs: probe.runs }),
        stop: () => {
          probe.events.push("runtime:stop");
          return Promise.resolve();
        },
      });
    },
  });
}

interface Kit {
  host: HostedServer;
  probe: Probe;
  client: Client;
  /** Every JSON-RPC message the server sent to this client, in order. */
  received: JSONRPCMessage[];
  /** The host's log lines. */
  logs: LogLine[];
}

interface KitOptions {
  spec?: (probe: Probe) => AnyServerSpec;
  client?: ConstructorParameters<typeof Client>[1];
  /** Runs before the client connects (request handlers need that). */
  prepare?: (client: Client) => void;
}

async function withKit(
  body: (kit: Kit) => Promise<void>,
  options: KitOptions = {},
): Promise<void> {
  const probe = new Probe();
  const { log, logs } = capturedLog("info");
  const store = new MemoryStore();
  const host = await HostedServer.start((options.spec ?? kitSpec)(probe), {
    store,
    log,
    config: {},
    dataDir: "/nonexistent/agentd-kit-test",
  });
  const client = new Client(
    { name: "kit-test", version: "1.0.0" },
    options.client,
  );
  options.prepare?.(client);
  const received: JSONRPCMessage[] = [];
  try {
    const transport = await connectInProcess(host);
    await client.connect(transport);
    const forward = transport.onmessage;
    transport.onmessage = (message, extra) => {
      received.push(message);
      forward?.(message, extra);
    };
    await body({ host, probe, client, received, logs });
    await client.close();
    // Closing the link detaches the session from the host.
    assert.equal(host.listeners.size, 0);
  } finally {
    probe.release.resolve();
    await client.close();
    await host.stop(1_000);
    await store.close();
  }
}

/** The texts of a tool result's text blocks. */
function textsOf(result: object): string[] {
  const content = "content" in result ? result.content : undefined;
  if (!Array.isArray(content)) return [];
  return content.flatMap((block: unknown) =>
    typeof block === "object" && block !== null && "type" in block &&
      block.type === "text" && "text" in block &&
      typeof block.text === "string"
      ? [block.text]
      : []
  );
}

/** The params of every notification with this method the client received. */
function notificationsOf(
  received: readonly JSONRPCMessage[],
  method: string,
): unknown[] {
  return received.flatMap((message) =>
    "method" in message && !("id" in message) && message.method === method
      ? [message.params]
      : []
  );
}

/** A predicate for assert.rejects: an McpError with this code whose message has every part. */
function mcpError(code: number, ...parts: string[]) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof McpError, `expected McpError, got ${error}`);
    assert.equal(error.code, code, error.message);
    for (const part of parts) {
      assert.ok(
        error.message.includes(part),
        `"${error.message}" should include "${part}"`,
      );
    }
    return true;
  };
}

Deno.test("kit: tools/list shows names, descriptions, strict 2020-12 input schemas, annotations and each tool's origin", async () => {
  await withKit(async ({ client }) => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
    const write = tools.find((t) => t.name === "note_write");
    assert.deepEqual(write, {
      name: "note_write",
      title: "Write a note",
      description: "Stores a note's text under a key.",
      inputSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: {
          key: { type: "string", minLength: 1 },
          text: { type: "string" },
          tags: { type: "array", items: { type: "string" } },
        },
        required: ["key", "text"],
        additionalProperties: false,
      },
      annotations: { destructiveHint: false, idempotentHint: true },
      _meta: { "io.agentd/origin": { server: "kit", tool: "note_write" } },
    });
    for (const listed of tools) {
      assert.equal(
        listed.inputSchema.additionalProperties,
        false,
        listed.name,
      );
      assert.equal(
        listed.inputSchema.$schema,
        "https://json-schema.org/draft/2020-12/schema",
      );
    }
    const fail = tools.find((t) => t.name === "fail");
    assert.deepEqual(fail?.inputSchema.required, ["mode"]);
    assert.equal(fail?.description, "Fails on purpose.");
    assert.equal(fail?.annotations, undefined);
    assert.deepEqual(
      tools.find((t) => t.name === "report")?.inputSchema.required,
      undefined,
    );
  });
});

Deno.test("kit: bad arguments give isError naming the tool and every bad field; the handler does not run", async () => {
  await withKit(async ({ client, probe, host }) => {
    const result = await client.callTool({
      name: "note_write",
      arguments: { text: 42, color: "red" },
    });
    assert.equal(result.isError, true);
    const [message] = textsOf(result);
    assert.ok(
      message.startsWith("Invalid arguments for note_write: "),
      message,
    );
    assert.match(message, /\bkey: .*expected string, received undefined/);
    assert.match(message, /\btext: .*expected string, received number/);
    assert.match(message, /Unrecognized key: "color"/);
    assert.equal(probe.runs, 0);

    const empty = await client.callTool({ name: "note_write" });
    assert.equal(empty.isError, true);
    assert.match(textsOf(empty)[0], /key: .*; text: /);

    const tooShort = await client.callTool({
      name: "note_write",
      arguments: { key: "", text: "x", tags: "not-a-list" },
    });
    assert.equal(tooShort.isError, true);
    assert.match(textsOf(tooShort)[0], /key: .*>=1 characters/);
    assert.match(textsOf(tooShort)[0], /tags: .*expected array/);

    assert.equal(probe.runs, 0);
    const health = await host.health();
    assert.equal(health.calls, 3);
    assert.equal(health.errors, 3);
  });
});

Deno.test("kit: an unknown tool rejects with InvalidParams listing the available tools", async () => {
  await withKit(async ({ client, host }) => {
    await assert.rejects(
      client.callTool({ name: "note_erase", arguments: {} }),
      mcpError(
        ErrorCode.InvalidParams,
        `Unknown tool "note_erase" on server "kit". Available: ${
          TOOL_NAMES.join(", ")
        }`,
      ),
    );
    assert.equal(ErrorCode.InvalidParams, -32602);
    assert.equal((await host.health()).calls, 0);
  });
});

Deno.test("kit: ToolError and plain errors become isError results; health counts calls and errors", async () => {
  await withKit(async ({ client, host, logs }) => {
    const ok = await client.callTool({
      name: "note_write",
      arguments: { key: "a", text: "hello" },
    });
    assert.equal(ok.isError, undefined);
    assert.deepEqual(ok.structuredContent, { key: "a", length: 5 });

    const toolError = await client.callTool({
      name: "fail",
      arguments: { mode: "tool" },
    });
    assert.equal(toolError.isError, true);
    assert.deepEqual(toolError.content, [
      { type: "text", text: 'Note "x" is locked' },
      { type: "text", text: "Unlock it first." },
    ]);

    const plain = await client.callTool({
      name: "fail",
      arguments: { mode: "plain" },
    });
    assert.equal(plain.isError, true);
    assert.deepEqual(plain.content, [
      { type: "text", text: "fail failed: disk on fire" },
    ]);

    const health = await host.health();
    assert.equal(health.phase, "running");
    assert.equal(health.calls, 3);
    assert.equal(health.errors, 2);
    assert.equal(health.in_flight, 0);
    assert.deepEqual(health.details, { runs: 3 });

    // Only the unexpected failure is logged as an error, with its message.
    const failures = logs.filter((line) => line.event === "tool_failed");
    assert.equal(failures.length, 1);
    assert.equal(failures[0].level, "error");
    assert.equal(failures[0].tool, "fail");
    assert.deepEqual(failures[0].error, {
      name: "Error",
      message: "disk on fire",
    });
    const calls = logs.filter((line) => line.event === "tool_call");
    assert.deepEqual(calls.map((line) => [line.tool, line.ok]), [
      ["note_write", true],
      ["fail", false],
      ["fail", false],
    ]);
  });
});

Deno.test("kit: a server whose start throws is in error; its tools answer isError naming the phase", async () => {
  const broken = (probe: Probe) =>
    defineServer<KitContext>({
      ...kitSpec(probe),
      id: "broken",
      start: () => Promise.reject(new Error("database is locked")),
    });
  await withKit(async ({ client, host, probe }) => {
    const health = await host.health();
    assert.equal(health.phase, "error");
    assert.equal(health.error, "Cannot start broken: database is locked");
    assert.equal(health.details, undefined);

    const result = await client.callTool({
      name: "note_write",
      arguments: { key: "a", text: "b" },
    });
    assert.equal(result.isError, true);
    assert.match(
      textsOf(result)[0],
      /Server "broken" is not running \(phase error since \S+: Cannot start broken: database is locked\)$/,
    );
    assert.equal(probe.runs, 0);

    await assert.rejects(
      client.readResource({ uri: "kit://readme" }),
      mcpError(ErrorCode.InternalError, "phase error"),
    );

    await host.stop(1_000);
    assert.equal(host.phase.phase, "shutdown");
    // The runtime never started, so there is nothing of it to stop.
    assert.deepEqual(probe.events, []);
  }, { spec: broken });
});

Deno.test("kit: stop() waits for an in-flight call, then stops the runtime; later calls are refused", async () => {
  await withKit(async ({ client, host, probe }) => {
    const call = client.callTool({
      name: "slow",
      arguments: { label: "draining" },
    });
    call.catch(() => {}); // awaited below; a failed test must not leak a rejection
    await probe.entered.promise;
    assert.equal((await host.health()).in_flight, 1);

    let stopped = false;
    const stopping = host.stop(5_000).then(() => {
      stopped = true;
    });
    assert.equal(host.phase.phase, "shutdown");
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(stopped, false, "stop() returned while a call was running");
    assert.deepEqual(probe.events, ["call:start"]);

    probe.release.resolve();
    const result = await call;
    await stopping;
    assert.deepEqual(result.content, [{ type: "text", text: "done draining" }]);
    assert.equal(result.isError, undefined);
    assert.deepEqual(probe.events, ["call:start", "call:end", "runtime:stop"]);

    const runsBefore = probe.runs;
    const after = await client.callTool({
      name: "note_write",
      arguments: { key: "a", text: "b" },
    });
    assert.equal(after.isError, true);
    assert.match(
      textsOf(after)[0],
      /Server "kit" is not running \(phase shutdown since /,
    );
    assert.equal(probe.runs, runsBefore);
    const health = await host.health();
    assert.equal(health.phase, "shutdown");
    assert.equal(health.in_flight, 0);
  });
});

Deno.test("kit: stop() gives up draining after its timeout and says so in the log", async () => {
  await withKit(async ({ client, host, probe, logs }) => {
    const call = client.callTool({
      name: "slow",
      arguments: { label: "late" },
    });
    call.catch(() => {}); // awaited below; a failed test must not leak a rejection
    await probe.entered.promise;
    const started = performance.now();
    await host.stop(50);
    assert.ok(performance.now() - started >= 40);
    const timeout = logs.find((line) => line.event === "drain_timeout");
    assert.equal(timeout?.level, "warn");
    assert.equal(timeout?.in_flight, 1);
    assert.equal(timeout?.timeout_ms, 50);
    assert.deepEqual(probe.events, ["call:start", "runtime:stop"]);
    probe.release.resolve();
    assert.deepEqual(textsOf(await call), ["done late"]);
  });
});

Deno.test("kit: progress is sent only with a progress token", async () => {
  await withKit(async ({ client, received }) => {
    const silent = await client.callTool({ name: "report", arguments: {} });
    assert.deepEqual(textsOf(silent), ["reported"]);
    assert.deepEqual(notificationsOf(received, "notifications/progress"), []);

    const seen: [number, number | undefined, string | undefined][] = [];
    const reported = await client.callTool(
      { name: "report", arguments: {} },
      undefined,
      {
        onprogress: (p) => seen.push([p.progress, p.total, p.message]),
      },
    );
    assert.deepEqual(textsOf(reported), ["reported"]);
    assert.deepEqual(seen, [[1, 2, "half"], [2, 2, undefined]]);
    assert.equal(notificationsOf(received, "notifications/progress").length, 2);
  });
});

Deno.test("kit: call.log honours logging/setLevel", async () => {
  const messages: { level: string; logger?: string; data: unknown }[] = [];
  await withKit(async ({ client }) => {
    await client.callTool({ name: "report", arguments: {} });
    await waitFor(() => messages.at(-1)?.level, (level) => level === "error");
    assert.deepEqual(messages, [
      { level: "debug", logger: "kit", data: { step: "debug" } },
      { level: "info", logger: "kit", data: { step: "info" } },
      { level: "warning", logger: "kit", data: { step: "warning" } },
      { level: "error", logger: "kit", data: { step: "error" } },
    ]);

    messages.length = 0;
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "report", arguments: {} });
    await waitFor(() => messages.at(-1)?.level, (level) => level === "error");
    assert.deepEqual(messages.map((m) => m.level), ["warning", "error"]);
  }, {
    prepare: (client) =>
      client.setNotificationHandler(
        LoggingMessageNotificationSchema,
        (notification) => {
          const { level, logger, data } = notification.params;
          messages.push({ level, logger, data });
        },
      ),
  });
});

Deno.test("kit: sample and elicit fail clearly when the client lacks the capability", async () => {
  await withKit(async ({ client, host }) => {
    const sampled = await client.callTool({
      name: "ask_model",
      arguments: { question: "2+2?" },
    });
    assert.equal(sampled.isError, true);
    assert.deepEqual(textsOf(sampled), [
      "The client does not support sampling (no `sampling` capability).",
    ]);
    const elicited = await client.callTool({ name: "ask_user", arguments: {} });
    assert.equal(elicited.isError, true);
    assert.deepEqual(textsOf(elicited), [
      "The client does not support elicitation (no `elicitation` capability).",
    ]);
    assert.equal((await host.health()).errors, 2);
  });
});

Deno.test("kit: sample and elicit reach a capable client and return its replies", async () => {
  const questions: string[] = [];
  const prompts: string[] = [];
  await withKit(async ({ client }) => {
    const sampled = await client.callTool({
      name: "ask_model",
      arguments: { question: "What is 2+2?" },
    });
    assert.equal(sampled.isError, undefined);
    assert.deepEqual(sampled.structuredContent, {
      model: "test-model",
      reply: "echo: What is 2+2?",
    });
    assert.deepEqual(questions, ["What is 2+2?"]);

    const elicited = await client.callTool({ name: "ask_user", arguments: {} });
    assert.equal(elicited.isError, undefined);
    assert.deepEqual(elicited.structuredContent, {
      action: "accept",
      name: "Ada",
    });
    assert.deepEqual(prompts, ["Your name?"]);
  }, {
    client: { capabilities: { sampling: {}, elicitation: {} } },
    prepare(client) {
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        const [first] = request.params.messages;
        const asked = !Array.isArray(first.content) &&
            first.content.type === "text"
          ? first.content.text
          : "";
        questions.push(asked);
        return {
          model: "test-model",
          role: "assistant",
          content: { type: "text", text: `echo: ${asked}` },
        };
      });
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        prompts.push(request.params.message);
        return { action: "accept", content: { name: "Ada" } };
      });
    },
  });
});

Deno.test("kit: resources list, read (static and template), unknown URIs, subscriptions", async () => {
  const updates: string[] = [];
  await withKit(async ({ client, probe }) => {
    const { resources } = await client.listResources();
    assert.deepEqual(resources, [{
      uri: "kit://readme",
      name: "readme",
      title: "Read me",
      description: "A fixed text.",
      mimeType: "text/plain",
    }]);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates, [{
      uriTemplate: "kit://notes/{key}",
      name: "note",
      description: "A note written with note_write.",
      mimeType: "text/plain",
    }]);

    const readme = await client.readResource({ uri: "kit://readme" });
    assert.deepEqual(readme.contents, [{
      uri: "kit://readme",
      mimeType: "text/plain",
      text: "Hello from kit",
    }]);

    await client.callTool({
      name: "note_write",
      arguments: { key: "alpha", text: "first note" },
    });
    const note = await client.readResource({ uri: "kit://notes/alpha" });
    assert.deepEqual(note.contents, [{
      uri: "kit://notes/alpha",
      mimeType: "text/plain",
      text: "first note",
    }]);
    const missingNote = await client.readResource({ uri: "kit://notes/zeta" });
    assert.deepEqual(missingNote.contents.map((c) => c.uri), [
      "kit://notes/zeta",
    ]);

    await assert.rejects(
      client.readResource({ uri: "kit://nowhere" }),
      mcpError(-32002, "Resource not found: kit://nowhere"),
    );
    await assert.rejects(
      client.subscribeResource({ uri: "kit://nowhere" }),
      mcpError(-32002, "Resource not found: kit://nowhere"),
    );

    const deps = probe.deps;
    assert.ok(deps);
    await client.subscribeResource({ uri: "kit://readme" });
    await client.subscribeResource({ uri: "kit://notes/alpha" });
    deps.resourceUpdated("kit://notes/beta"); // nobody subscribed to it
    deps.resourceUpdated("kit://readme");
    await waitFor(() => updates.length, (n) => n === 1);
    assert.deepEqual(updates, ["kit://readme"]);

    await client.unsubscribeResource({ uri: "kit://readme" });
    deps.resourceUpdated("kit://readme");
    deps.resourceUpdated("kit://notes/alpha");
    await waitFor(() => updates.length, (n) => n >= 2);
    await client.ping();
    assert.deepEqual(updates, ["kit://readme", "kit://notes/alpha"]);
  }, {
    prepare: (client) =>
      client.setNotificationHandler(
        ResourceUpdatedNotificationSchema,
        (notification) => {
          updates.push(notification.params.uri);
        },
      ),
  });
});

Deno.test("kit: prompts list arguments, validate them on get, and complete values (capped at 100)", async () => {
  await withKit(async ({ client }) => {
    const { prompts } = await client.listPrompts();
    assert.deepEqual(prompts, [
      {
        name: "summarize",
        description: "Summarize a topic.",
        arguments: [
          { name: "topic", description: "What to summarize", required: true },
          { name: "style", description: "Tone of voice", required: false },
        ],
      },
      { name: "greet", description: "Says hello." },
    ]);

    const got = await client.getPrompt({
      name: "summarize",
      arguments: { topic: "tides", style: "dry" },
    });
    assert.deepEqual(got.messages, [{
      role: "user",
      content: { type: "text", text: "Summarize tides in a dry tone." },
    }]);
    const greeting = await client.getPrompt({ name: "greet" });
    assert.deepEqual(greeting.messages.map((m) => m.content), [
      { type: "text", text: "Hello!" },
    ]);

    await assert.rejects(
      client.getPrompt({ name: "summarize", arguments: { style: "dry" } }),
      mcpError(
        ErrorCode.InvalidParams,
        "Invalid arguments for prompt summarize: topic: ",
      ),
    );
    await assert.rejects(
      client.getPrompt({
        name: "summarize",
        arguments: { topic: "x", mood: "glum" },
      }),
      mcpError(ErrorCode.InvalidParams, 'Unrecognized key: "mood"'),
    );
    await assert.rejects(
      client.getPrompt({ name: "nope" }),
      mcpError(ErrorCode.InvalidParams, 'Unknown prompt "nope"'),
    );

    const all = await client.complete({
      ref: { type: "ref/prompt", name: "summarize" },
      argument: { name: "topic", value: "" },
    });
    assert.equal(all.completion.values.length, 100);
    assert.equal(all.completion.values[0], "topic-000");
    assert.equal(all.completion.values[99], "topic-099");
    assert.equal(all.completion.total, 150);
    assert.equal(all.completion.hasMore, true);

    const some = await client.complete({
      ref: { type: "ref/prompt", name: "summarize" },
      argument: { name: "topic", value: "topic-14" },
    });
    assert.deepEqual(some.completion, {
      values: TOPICS.slice(140, 150),
      total: 10,
      hasMore: false,
    });

    const none = await client.complete({
      ref: { type: "ref/prompt", name: "summarize" },
      argument: { name: "style", value: "d" },
    });
    assert.deepEqual(none.completion, { values: [], total: 0, hasMore: false });

    const keys = await client.complete({
      ref: { type: "ref/resource", uri: "kit://notes/{key}" },
      argument: { name: "key", value: "al" },
    });
    assert.deepEqual(keys.completion.values, ["alpha", "alpine"]);
  });
});
