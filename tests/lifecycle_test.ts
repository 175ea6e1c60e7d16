// SIGTERM while a slow tool call runs: the call completes, the store is
// flushed, the process exits 0; /health shows each server's phase.

import assert from "node:assert/strict";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "../platform/mcp_sdk.ts";
import { openKvStore } from "../platform/store/kv.ts";
import { REPEAT_SIGNAL_WINDOW_MS, signalGate } from "../platform/lifecycle.ts";
import {
  assertRunningExceptDisplay,
  responseTo,
  spawnServe,
  stdioSlowWrite,
  tempDir,
  waitFor,
} from "./helpers.ts";

async function storedValue(dataDir: string, key: string): Promise<unknown> {
  const store = await openKvStore(join(dataDir, "store.kv"));
  try {
    return (await store.get(["svc-conformance", "slow", key]))?.value;
  } finally {
    await store.close();
  }
}

async function health(
  url: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/health`);
  return { status: response.status, body: await response.json() };
}

Deno.test("lifecycle: SIGTERM during a slow call over HTTP drains it, flushes the store, exits 0", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path);
  const transport = new StreamableHTTPClientTransport(
    new URL(`${daemon.url}/mcp/conformance`),
  );
  const client = new Client({ name: "lifecycle", version: "1.0.0" });
  await client.connect(transport);
  try {
    const running = await health(daemon.url);
    assert.equal(running.status, 200);
    assertRunningExceptDisplay(running.body);
    assert.match(
      JSON.stringify(running.body.servers),
      /"conformance":\{[^{}]*"phase":"running"/,
    );

    const slow = client.callTool({
      name: "slow_write",
      arguments: {
        key: "drained",
        value: "written during shutdown",
        delay_ms: 1500,
      },
    });
    await waitFor(
      () => health(daemon.url),
      (h) => JSON.stringify(h.body).includes('"in_flight":1'),
    );
    daemon.process.kill("SIGTERM");

    const draining = await waitFor(
      () => health(daemon.url),
      (h) => h.status === 503,
    );
    assert.equal(draining.body.status, "shutting_down");
    assert.match(JSON.stringify(draining.body.servers), /"phase":"shutdown"/);

    const refused = await client.callTool({
      name: "test_simple_text",
      arguments: {},
    });
    assert.equal(refused.isError, true, "no new calls while draining");
    assert.match(
      JSON.stringify(refused.content),
      /not running \(phase shutdown/,
    );

    const result = await slow;
    assert.equal(result.isError, undefined);
    assert.deepEqual(result.content, [{ type: "text", text: "wrote drained" }]);
  } finally {
    await client.close().catch(() => {});
  }
  const status = await daemon.status;
  assert.equal(status.code, 0);
  assert.ok(daemon.logs.some((log) => log.event === "stopped"));
  assert.equal(
    await storedValue(dir.path, "drained"),
    "written during shutdown",
  );
});

Deno.test("lifecycle: SIGTERM during a slow call over stdio answers it, then exits 0", async () => {
  await using dir = await tempDir();
  const session = await stdioSlowWrite(dir.path, {
    key: "stdio",
    value: "kept",
    delay_ms: 1000,
  });
  await waitFor(
    () => session.stdout.join("\n"),
    (text) => text.includes("slow_write stdio waiting"),
  );
  session.child.kill("SIGTERM");
  const status = await session.status;

  assert.equal(status.code, 0, session.stderr.join("\n"));
  const answer = responseTo(session.stdout, 2);
  assert.ok(
    answer,
    `no answer to the slow call in ${session.stdout.join("\n")}`,
  );
  assert.deepEqual(answer.result, {
    content: [{ type: "text", text: "wrote stdio" }],
  });
  assert.equal(await storedValue(dir.path, "stdio"), "kept");
});

Deno.test("lifecycle: a signal repeated within the window is the same Ctrl-C; a later one forces exit", () => {
  const gate = signalGate(1000);
  assert.equal(gate.receive(10_000), "shutdown");
  assert.equal(gate.receive(10_001), "ignore", "terminal + deno task forward");
  assert.equal(gate.receive(10_999), "ignore");
  assert.equal(gate.receive(11_000), "exit", "a deliberate second Ctrl-C");
  assert.equal(REPEAT_SIGNAL_WINDOW_MS, 1000);
});
