// The gateway's calls to a built-in server take the kit's direct link: the
// caller's identity and outer session, progress with its numbers, the call
// timeout restarted by each progress report, cancellation and timeouts reach
// the server as they did over an in-process SDK client.

import assert from "node:assert/strict";
import { z } from "zod";
import { startServers } from "../../../cli/boot.ts";
import { readBaseConfig } from "../../../platform/config.ts";
import { Client } from "../../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { gatewayServer } from "../../../tools/gateway/mod.ts";
import type { HostedServer } from "../../../tools/kit/host.ts";
import { connectInProcess } from "../../../tools/kit/transport/sdk_server.ts";
import {
  defineServer,
  linkedSession,
  text,
  toolDefiner,
} from "../../../tools/kit/mod.ts";
import { forwardedSession } from "../../../tools/gateway/upstream.ts";
import { capturedLog, textOf, waitFor } from "../../helpers.ts";

/** What the probe server saw of its calls. */
interface Seen {
  /** Calls of `hang` that began. */
  hanging: number;
  aborted: string[];
}

const probeTool = toolDefiner<Seen>();

const probeServer = defineServer<Seen>({
  id: "probe",
  namespace: "svc-probe",
  title: "Probe",
  version: "0.0.0",
  tools: [
    probeTool({
      name: "steps",
      description: "Reports progress after each step, then names its caller",
      input: z.object({ steps: z.number().int(), step_ms: z.number().int() }),
      async handle(_seen, args, call) {
        for (let step = 1; step <= args.steps; step++) {
          await abortableDelay(args.step_ms, call.signal);
          await call.progress(step, args.steps, `step ${step}`);
        }
        return text(`caller ${call.caller.agent ?? "local"}`);
      },
    }),
    probeTool({
      name: "session",
      description: "Names the session its call belongs to",
      input: z.object({}),
      handle(_seen, _args, call) {
        return Promise.resolve(text(`session ${call.sessionId ?? "none"}`));
      },
    }),
    probeTool({
      name: "hang",
      description: "Answers only when its call is aborted",
      input: z.object({}),
      async handle(seen, _args, call) {
        seen.hanging++;
        await new Promise<void>((resolve) =>
          call.signal.addEventListener("abort", () => resolve(), {
            once: true,
          })
        );
        seen.aborted.push(String(call.signal.reason));
        return text("aborted");
      },
    }),
  ],
  start() {
    return Promise.resolve({ context: seen });
  },
});

const seen: Seen = { hanging: 0, aborted: [] };

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

async function withGateway(
  callTimeoutMs: number,
  body: (client: Client) => Promise<void>,
): Promise<void> {
  const { log } = capturedLog("error");
  const store = new MemoryStore();
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-link-" });
  let hosts: HostedServer[] = [];
  const client = new Client({ name: "link-test", version: "1" });
  try {
    hosts = await startServers([probeServer, gatewayServer], {
      store,
      log,
      settings: {
        base: readBaseConfig({}),
        values: { gateway: { call_timeout_ms: callTimeoutMs } },
        origin: {},
        dataDir,
      },
      env: {},
    });
    const gateway = hosts.find((host) => host.id === "gateway");
    assert.ok(gateway, "the gateway runs");
    await client.connect(await connectInProcess(gateway, { agent: "alice" }));
    await body(client);
  } finally {
    await client.close();
    for (const host of hosts) await host.stop(1000);
    await store.close();
    await Deno.remove(dataDir, { recursive: true });
  }
}

Deno.test("gateway → built-in: progress with its numbers restarts the call timeout; the caller's identity arrives", async () => {
  // 4 steps of 400 ms: 1.6 s in all, over the 1 s call timeout, never 1 s without a report.
  await withGateway(1000, async (client) => {
    const reports: { progress: number; total?: number }[] = [];
    const result = await client.callTool(
      { name: "probe__steps", arguments: { steps: 4, step_ms: 400 } },
      undefined,
      {
        timeout: 30_000,
        onprogress: ({ progress, total }) => reports.push({ progress, total }),
      },
    );
    assert.equal(result.isError, undefined, textOf(result));
    assert.equal(textOf(result), "caller alice");
    assert.deepEqual(reports, [
      { progress: 1, total: 4 },
      { progress: 2, total: 4 },
      { progress: 3, total: 4 },
      { progress: 4, total: 4 },
    ]);
  });
});

Deno.test("gateway → built-in: each outer session reaches the server as its own session", async () => {
  // An in-process client acting for an outer session (as the HTTP face's
  // sessions do) runs inside linkedSession; the gateway forwards it per call.
  await withGateway(5000, async (client) => {
    const call = (session: string | undefined) =>
      linkedSession.run(
        session,
        () => client.callTool({ name: "probe__session", arguments: {} }),
      );
    const [first, second, none] = await Promise.all([
      call("outer-1"),
      call("outer-2"),
      call(undefined),
    ]);
    assert.equal(textOf(first), `session ${forwardedSession("outer-1")}`);
    assert.equal(textOf(second), `session ${forwardedSession("outer-2")}`);
    assert.equal(textOf(none), "session none");
  });
});

Deno.test("gateway → built-in: a silent call times out at call_timeout_ms and the server's call is aborted", async () => {
  await withGateway(300, async (client) => {
    const before = seen.aborted.length;
    const result = await client.callTool(
      { name: "probe__hang", arguments: {} },
      undefined,
      { timeout: 30_000 },
    );
    assert.equal(result.isError, true);
    assert.match(
      textOf(result),
      /no answer to tools\/call within 300 ms \(call_timeout_ms\)/,
    );
    const aborted = await waitFor(
      () => seen.aborted.slice(before),
      (reasons) => reasons.length > 0,
    );
    assert.match(aborted[0], /Request timed out/);
  });
});

Deno.test("gateway → built-in: the caller's cancel aborts the server's call", async () => {
  await withGateway(60_000, async (client) => {
    const before = seen.aborted.length;
    const began = seen.hanging;
    const controller = new AbortController();
    const pending = client.callTool(
      { name: "probe__hang", arguments: {} },
      undefined,
      { signal: controller.signal },
    );
    // Cancel once the call runs in the server.
    await waitFor(() => seen.hanging, (count) => count > began);
    controller.abort("the caller gave up");
    await assert.rejects(pending);
    const aborted = await waitFor(
      () => seen.aborted.slice(before),
      (reasons) => reasons.length > 0,
    );
    assert.match(aborted[0], /the caller gave up/);
  });
});
