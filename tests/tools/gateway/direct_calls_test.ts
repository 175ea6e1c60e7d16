// The gateway's direct tools/call (tools/gateway/direct_calls.ts) against a
// real streamable HTTP upstream (a raw JSON-RPC server, so it can answer what
// an SDK server would refuse to send), on the gateway's own HTTP client
// transport with an SDK Client connected on it: each answer settles as the
// SDK Client's callTool settles on it (result, zod error, output schema
// errors, JSON-RPC error), progress arrives in order before the result, a
// timeout and an abort send notifications/cancelled, a close fails the call,
// and the Client's own messages still reach it.

import assert from "node:assert/strict";
import {
  CallToolResultSchema,
  Client,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  type Tool,
} from "../../../platform/mcp_sdk.ts";
import { HttpClientTransport } from "../../../tools/kit/transport/http_client.ts";
import {
  DirectCalls,
  isPlainResult,
} from "../../../tools/gateway/direct_calls.ts";

const TOOLS: Tool[] = [
  "text",
  "image",
  "bad",
  "fails",
  "progress",
  "hang",
].map((name) => ({ name, inputSchema: { type: "object", properties: {} } }));
for (const name of ["typed_ok", "typed_missing", "typed_wrong"]) {
  TOOLS.push({
    name,
    inputSchema: { type: "object", properties: {} },
    outputSchema: {
      type: "object",
      properties: { n: { type: "number" } },
      required: ["n"],
    },
  });
}

const RESULTS: Record<string, unknown> = {
  text: { content: [{ type: "text", text: "hi" }], isError: false },
  image: {
    content: [{ type: "image", data: "AAAA", mimeType: "image/png" }],
  },
  // No text: CallToolResultSchema refuses it.
  bad: { content: [{ type: "text" }] },
  typed_ok: {
    content: [{ type: "text", text: '{"n":1}' }],
    structuredContent: { n: 1 },
  },
  typed_missing: { content: [{ type: "text", text: "none" }] },
  typed_wrong: {
    content: [{ type: "text", text: "{}" }],
    structuredContent: { n: "one" },
  },
};

interface Message {
  id?: string | number;
  method?: string;
  params?: {
    name?: string;
    requestId?: string | number;
    _meta?: { progressToken?: string | number };
  };
}

const encoder = new TextEncoder();
const sse = (message: object) =>
  encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

/** A raw MCP server over streamable HTTP (stateless; SSE answers for `progress` and `hang`). */
function upstream() {
  const cancelled: (string | number | undefined)[] = [];
  const tokens: unknown[] = [];
  const hanging = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const events = new EventTarget();
  const http = Deno.serve({ port: 0, onListen() {} }, async (request) => {
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const message: Message = await request.json();
    const answer = (result: unknown) =>
      Response.json({ jsonrpc: "2.0", id: message.id, result });
    if (message.method === "notifications/cancelled") {
      cancelled.push(message.params?.requestId);
      events.dispatchEvent(new Event("cancelled"));
    }
    if (message.id === undefined) return new Response(null, { status: 202 });
    if (message.method === "initialize") {
      return answer({
        protocolVersion: "2025-06-18",
        capabilities: { tools: {}, logging: {} },
        serverInfo: { name: "raw", version: "1.0.0" },
      });
    }
    if (message.method === "ping") return answer({});
    if (message.method === "tools/list") return answer({ tools: TOOLS });
    const name = message.params?.name ?? "";
    tokens.push(message.params?._meta?.progressToken);
    if (name === "fails") {
      return Response.json({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32001, message: "no such thing", data: { why: 1 } },
      });
    }
    const token = message.params?._meta?.progressToken;
    if (name === "progress") {
      // Three reports, a log message (the Client's), then the answer: one body.
      const body = [1, 2, 3].map((progress) =>
        sse({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 3 },
        })
      );
      body.push(sse({
        jsonrpc: "2.0",
        method: "notifications/message",
        params: { level: "info", data: "working" },
      }));
      body.push(sse({
        jsonrpc: "2.0",
        id: message.id,
        result: { content: [{ type: "text", text: "done" }] },
      }));
      return new Response(new Blob(body).stream(), {
        headers: { "content-type": "text/event-stream" },
      });
    }
    if (name === "hang") {
      events.dispatchEvent(new Event("hanging"));
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            hanging.add(controller);
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    }
    return answer(RESULTS[name]);
  });
  const next = (type: string) =>
    new Promise<void>((resolve) =>
      events.addEventListener(type, () => resolve(), { once: true })
    );
  return {
    url: new URL(`http://127.0.0.1:${http.addr.port}/mcp`),
    cancelled,
    tokens,
    next,
    async [Symbol.asyncDispose]() {
      for (const controller of hanging) controller.close();
      await http.shutdown();
    },
  };
}

async function connected(url: URL) {
  const transport = new HttpClientTransport(url, { headers: {} });
  const client = new Client({ name: "direct-test", version: "1.0.0" });
  await client.connect(transport);
  const { tools } = await client.listTools(); // the Client caches output schemas, as the gateway's does
  return { client, transport, tools };
}

type Outcome =
  | { ok: unknown }
  | { error: string; message: string; code?: number; data?: unknown };

async function outcome(promise: Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await promise };
  } catch (error) {
    assert.ok(error instanceof Error);
    return error instanceof McpError
      ? {
        error: error.constructor.name,
        message: error.message,
        code: error.code,
        data: error.data,
      }
      // zod's core and classic error classes (the SDK's safeParse, the schema's own): one failure.
      : {
        error: error.constructor.name.replace("$", ""),
        message: error.message,
      };
  }
}

const OPTIONS = {
  timeoutMs: 60_000,
  maxTotalMs: 600_000,
  signal: new AbortController().signal,
  onprogress() {},
};

Deno.test("direct calls: every answer settles as the SDK Client's callTool settles on it", async () => {
  await using server = upstream();
  const { client, transport, tools } = await connected(server.url);
  try {
    const direct = DirectCalls.of(transport);
    for (
      const name of [
        "text",
        "image",
        "bad",
        "fails",
        "typed_ok",
        "typed_missing",
        "typed_wrong",
      ]
    ) {
      const listed = tools.find((tool) => tool.name === name);
      const sdk = await outcome(
        client.callTool({ name, arguments: {} }, CallToolResultSchema),
      );
      const ours = await outcome(direct.call(listed, name, {}, OPTIONS));
      assert.deepEqual(ours, sdk, name);
    }
    // What each case is, so the comparison cannot pass on two equal failures.
    const kinds = await Promise.all(
      ["text", "bad", "fails", "typed_missing", "typed_wrong"].map(
        async (name) =>
          await outcome(
            direct.call(
              tools.find((tool) => tool.name === name),
              name,
              {},
              OPTIONS,
            ),
          ),
      ),
    );
    assert.deepEqual(kinds[0], { ok: RESULTS.text });
    assert.equal("error" in kinds[1] && kinds[1].error, "ZodError");
    assert.deepEqual(kinds[2], {
      error: "McpError",
      message: "MCP error -32001: no such thing",
      code: -32001,
      data: { why: 1 },
    });
    assert.equal("code" in kinds[3] && kinds[3].code, ErrorCode.InvalidRequest);
    assert.equal("code" in kinds[4] && kinds[4].code, ErrorCode.InvalidParams);
    // Its requests carry string ids of its own as progress tokens; the Client's numbers.
    assert.ok(server.tokens.some((token) => typeof token === "string"));
    // The Client still has its connection.
    await client.ping();
  } finally {
    await client.close();
  }
});

Deno.test("direct calls: progress in order before the result; the Client still gets its own notifications", async () => {
  await using server = upstream();
  const { client, transport, tools } = await connected(server.url);
  try {
    const logged = Promise.withResolvers<unknown>();
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (notification) => logged.resolve(notification.params.data),
    );
    const seen: string[] = [];
    const result = await DirectCalls.of(transport).call(
      tools.find((tool) => tool.name === "progress"),
      "progress",
      {},
      {
        ...OPTIONS,
        onprogress: (progress, total) => seen.push(`${progress}/${total}`),
      },
    ).then((result) => {
      seen.push("result");
      return result;
    });
    assert.deepEqual(seen, ["1/3", "2/3", "3/3", "result"]);
    assert.deepEqual(result, { content: [{ type: "text", text: "done" }] });
    assert.equal(await logged.promise, "working");
  } finally {
    await client.close();
  }
});

Deno.test("direct calls: a timeout, an abort and a close end the call; the first two cancel it upstream", async () => {
  await using server = upstream();
  const { client, transport, tools } = await connected(server.url);
  const hang = tools.find((tool) => tool.name === "hang");
  const direct = DirectCalls.of(transport);
  try {
    // Timeout: the SDK's error, with its `timeout`, and a cancellation upstream.
    const cancelled = server.next("cancelled");
    const timedOut = await outcome(
      direct.call(hang, "hang", {}, { ...OPTIONS, timeoutMs: 50 }),
    );
    assert.deepEqual(timedOut, {
      error: "McpError",
      message: "MCP error -32001: Request timed out",
      code: ErrorCode.RequestTimeout,
      data: { timeout: 50 },
    });
    await cancelled;
    assert.equal(typeof server.cancelled[0], "string");

    // Abort, once the upstream has the call: rejected with the reason.
    const abort = new AbortController();
    const hanging = server.next("hanging");
    const aborted = direct.call(hang, "hang", {}, {
      ...OPTIONS,
      signal: abort.signal,
    });
    await hanging;
    const nowCancelled = server.next("cancelled");
    abort.abort(new Error("caller left"));
    await assert.rejects(aborted, /caller left/);
    await nowCancelled;
    assert.equal(server.cancelled.length, 2);
  } finally {
    // Close with a call pending: it fails as the SDK fails it.
    const hanging = server.next("hanging");
    const pending = outcome(direct.call(hang, "hang", {}, OPTIONS));
    await hanging;
    await client.close();
    assert.deepEqual(await pending, {
      error: "McpError",
      message: "MCP error -32000: Connection closed",
      code: ErrorCode.ConnectionClosed,
      data: undefined,
    });
  }
});

Deno.test("direct calls: the hand check passes only what CallToolResultSchema passes unchanged", () => {
  const plain = [
    { content: [] },
    { content: [{ type: "text", text: "a" }], isError: true },
    {
      content: [{ type: "text", text: "a", _meta: { k: 1 } }],
      structuredContent: { a: 1 },
      _meta: { "io.agentd/x": 1 },
      extra: "kept",
    },
  ];
  for (const result of plain) {
    assert.ok(isPlainResult(result), JSON.stringify(result));
    assert.deepEqual(CallToolResultSchema.parse(result), result);
  }
  const other = [
    {},
    { content: {} },
    { content: [{ type: "text" }] },
    { content: [{ type: "text", text: 1 }] },
    { content: [{ type: "text", text: "a", annotations: { priority: 2 } }] },
    { content: [{ type: "text", text: "a", stray: 1 }] },
    { content: [{ type: "image", data: "", mimeType: "image/png" }] },
    { content: [], structuredContent: [] },
    { content: [], isError: "yes" },
    { content: [], _meta: { progressToken: {} } },
    { content: [], _meta: [] },
  ];
  for (const result of other) {
    assert.ok(!isPlainResult(result), JSON.stringify(result));
  }
});
