// The kit's dispatch of a session's messages to the SDK's Protocol
// (tools/kit/transport/sdk_server.ts `connectChecked`): by shape, after the
// transport's envelope check, instead of the Protocol's zod guards; and
// tools/call parsed once, by the SDK Server's own CallToolRequestSchema
// check. In process, through McpHttpEndpoint, as the daemon mounts it.

import assert from "node:assert/strict";
import { z } from "zod";
import { Server } from "../../platform/mcp_sdk_server.ts";
import { defineServer, text, toolDefiner } from "../../tools/kit/mod.ts";
import { call, httpSession } from "./http_session.ts";

const tool = toolDefiner<Record<never, never>>();

const echo = defineServer<Record<never, never>>({
  id: "echo",
  namespace: "svc-echo",
  title: "Echo",
  version: "1.0.0",
  tools: [
    tool({
      name: "echo",
      description: "Answers its word",
      input: z.object({ word: z.string() }),
      handle: (_ctx, { word }) => Promise.resolve(text(word)),
    }),
    tool({
      name: "wait",
      description: "Answers when cancelled",
      input: z.object({}),
      async handle(_ctx, _args, call) {
        await new Promise((resolve) =>
          call.signal.addEventListener("abort", resolve, { once: true })
        );
        return text("cancelled");
      },
    }),
  ],
  start: () => Promise.resolve({ context: {} }),
});

Deno.test("sdk dispatch: the SDK's Server still has the Protocol methods the kit dispatches to", () => {
  // Without them connectChecked keeps the SDK's own (slower) dispatch: an
  // SDK upgrade that renames them fails here, not silently in the benches.
  const server = new Server({ name: "probe", version: "1" }, {
    capabilities: {},
  });
  for (const method of ["_onrequest", "_onnotification", "_onresponse"]) {
    assert.equal(typeof Reflect.get(server, method), "function", method);
  }
});

Deno.test("sdk dispatch: a call's arguments reach the tool, checked by the tool's schema", async () => {
  await using s = await httpSession(echo);
  const answer = await (await s.inSession({
    jsonrpc: "2.0",
    id: 2,
    method: "tools/call",
    params: { name: "echo", arguments: { word: "hello" } },
  })).json();
  assert.deepEqual(answer.result.content, [{ type: "text", text: "hello" }]);
  const bad = await (await s.inSession({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "echo", arguments: { word: 7 } },
  })).json();
  assert.equal(bad.result.isError, true);
  assert.match(bad.result.content[0].text, /Invalid arguments for echo/);
});

Deno.test("sdk dispatch: a malformed tools/call is refused by the SDK's check, with its reason", async () => {
  await using s = await httpSession(echo);
  for (
    const [id, params] of [
      [4, {}],
      [5, { name: 42 }],
      [6, { name: "echo", arguments: ["hello"] }],
    ] as const
  ) {
    const answer = await (await s.inSession({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params,
    })).json();
    assert.equal(answer.id, id);
    assert.equal(answer.error.code, -32602, JSON.stringify(answer));
    assert.match(answer.error.message, /Invalid tools\/call request/);
  }
});

Deno.test("sdk dispatch: a notification reaches the Protocol (a cancellation ends its call)", async () => {
  await using s = await httpSession(echo);
  const waiting = s.inSession(call(7, "wait"));
  await s.busy();
  const cancelled = await s.inSession({
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: 7 },
  });
  assert.equal(cancelled.status, 202);
  // The SDK answers no cancelled request: its POST ends with an empty stream.
  const response = await waiting;
  assert.equal(await response.text(), "");
  await s.idle();
});
