// A hosted server opened with retries (how `agentd mcp <id>` runs on stdio)
// starts again on a tool call while in error: not more than once per
// interval, one attempt shared by calls at once, setup failures included,
// and a runtime that a retry finishes after shutdown is stopped.

import assert from "node:assert/strict";
import { z } from "zod";
import { Client } from "../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { HostedServer } from "../../tools/kit/host.ts";
import { defineServer, text, toolDefiner } from "../../tools/kit/mod.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import { capturedLog, textOf } from "../helpers.ts";

const tool = toolDefiner<{ greeting: string }>();

interface FlakyState {
  /** Why the start fails; it succeeds while unset. */
  broken?: string;
  starts: number;
  stops: number;
  /** A start waits for this. */
  gate?: Promise<void>;
}

/** A server whose start fails while `broken` holds a reason, counting starts and stops. */
function flakySpec(state: FlakyState) {
  return defineServer<{ greeting: string }>({
    id: "flaky",
    namespace: "svc-flaky",
    title: "Flaky",
    version: "1.0.0",
    tools: [tool({
      name: "hello",
      description: "Says hello.",
      input: z.object({}),
      handle: (ctx) => Promise.resolve(text(ctx.greeting)),
    })],
    async start() {
      state.starts++;
      await state.gate;
      if (state.broken !== undefined) throw new Error(state.broken);
      return {
        context: { greeting: "hello" },
        stop: () => {
          state.stops++;
          return Promise.resolve();
        },
      };
    },
  });
}

async function clientOf(host: HostedServer): Promise<Client> {
  const client = new Client({ name: "retry", version: "1.0.0" });
  await client.connect(await connectInProcess(host));
  return client;
}

Deno.test("kit: a server opened with retries starts again on a call, at most once per interval", async () => {
  const state: FlakyState = { broken: "no display", starts: 0, stops: 0 };
  let now = 1_000;
  const { log } = capturedLog("info");
  const host = await HostedServer.open(flakySpec(state), {
    log,
    clock: () => now,
    retryAfterMs: 2_000,
    setup: () =>
      Promise.resolve({ store: new MemoryStore(), config: {}, dataDir: "/x" }),
  });
  const client = await clientOf(host);
  const hello = () => client.callTool({ name: "hello", arguments: {} });
  try {
    assert.equal(host.phase.phase, "error");
    const refused = await hello();
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /Cannot start flaky: no display/);
    assert.match(textOf(refused), /Each call retries the start/);
    assert.equal(state.starts, 1, "no retry inside the interval");

    now += 2_000;
    const since = host.phase.state.since;
    assert.equal((await hello()).isError, true);
    assert.equal(state.starts, 2);
    assert.equal(host.phase.state.since, since, "same failure, same since");

    state.broken = undefined;
    assert.equal((await hello()).isError, true, "too soon after the last");
    assert.equal(state.starts, 2);
    now += 2_000;
    const ok = await hello();
    assert.notEqual(ok.isError, true, textOf(ok));
    assert.equal(textOf(ok), "hello");
    assert.equal(host.phase.phase, "running");
    assert.equal(state.starts, 3);
  } finally {
    await client.close();
    await host.stop(1_000);
  }
  assert.equal(state.stops, 1);
});

Deno.test("kit: callers at once share one retry; a setup that fails leaves the server in error too", async () => {
  const state: FlakyState = { starts: 0, stops: 0 };
  let now = 0;
  let setups = 0;
  const { log } = capturedLog("info");
  const host = await HostedServer.open(flakySpec(state), {
    log,
    clock: () => now,
    retryAfterMs: 1,
    setup: () => {
      setups++;
      return setups === 1
        ? Promise.reject(new Error("invalid configuration: x"))
        : Promise.resolve({
          store: new MemoryStore(),
          config: {},
          dataDir: "",
        });
    },
  });
  assert.equal(host.phase.phase, "error");
  assert.equal(
    host.phase.state.error,
    "Cannot start flaky: invalid configuration: x",
  );
  assert.equal(state.starts, 0);
  const gate = Promise.withResolvers<void>();
  state.gate = gate.promise;
  now = 10;
  // Three callers while the first attempt waits: they share it.
  const attempts = [host.retryStart(), host.retryStart(), host.retryStart()];
  gate.resolve();
  await Promise.all(attempts);
  assert.equal(state.starts, 1);
  assert.equal(setups, 2);
  assert.equal(host.phase.phase, "running");
  const client = await clientOf(host);
  try {
    const result = await client.callTool({ name: "hello", arguments: {} });
    assert.equal(textOf(result), "hello");
  } finally {
    await client.close();
    await host.stop(1_000);
  }
});

Deno.test("kit: a retry that finishes after shutdown began stops what it started", async () => {
  const gate = Promise.withResolvers<void>();
  const state: FlakyState = { broken: "later", starts: 0, stops: 0 };
  let now = 0;
  const { log } = capturedLog("info");
  const host = await HostedServer.open(flakySpec(state), {
    log,
    clock: () => now,
    retryAfterMs: 1,
    setup: () =>
      Promise.resolve({ store: new MemoryStore(), config: {}, dataDir: "" }),
  });
  state.broken = undefined;
  state.gate = gate.promise;
  now = 10;
  const retry = host.retryStart();
  const stopped = host.stop(5_000);
  gate.resolve();
  await Promise.all([retry, stopped]);
  assert.equal(host.phase.phase, "shutdown");
  assert.equal(state.starts, 2);
  assert.equal(state.stops, 1);
});
