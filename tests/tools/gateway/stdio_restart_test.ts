// A killed stdio upstream restarts once, through the restart its exit
// schedules: a health check that meets the exit (its ping fails with it) does
// not reconnect on its own, so no second connect later drops the new child
// while the upstream reads healthy (a call then failed with "not connected").

import assert from "node:assert/strict";
import { createLogger } from "../../../platform/log.ts";
import type { CallContext } from "../../../tools/kit/mod.ts";
import { Upstream } from "../../../tools/gateway/upstream.ts";
import { waitFor } from "../../helpers.ts";
import { EVERYTHING, textOf } from "./upstreams.ts";

const call: CallContext = {
  signal: new AbortController().signal,
  caller: {},
  progress: () => Promise.resolve(),
  log: () => Promise.resolve(),
  sample: () => Promise.reject(new Error("no sampling here")),
  elicit: () => Promise.reject(new Error("no elicitation here")),
  releaseStream: () => {},
};

Deno.test("stdio upstream: killed, then checked at once, it restarts once and serves every call after", async () => {
  const lines: Record<string, unknown>[] = [];
  const upstream = new Upstream({
    name: "everything",
    group: "everything",
    source: "config",
    target: {
      kind: "stdio",
      command: "node",
      args: [EVERYTHING, "stdio"],
      env: {},
    },
    log: createLogger({
      level: "debug",
      sink: (line) => lines.push(JSON.parse(line)),
    }),
    connectTimeoutMs: 30_000,
    healthTimeoutMs: 30_000,
    callTimeoutMs: 30_000,
    callMaxMs: 60_000,
    onChange: () => {},
  });
  try {
    await upstream.connect();
    const first = upstream.pid;
    assert.ok(first);
    assert.ok(upstream.has("echo"));
    Deno.kill(first, "SIGKILL");
    // The check's ping fails with the exit (or with the broken pipe before it).
    await upstream.check();
    const seen = new Set<number>([first]);
    // Every call from the exit on either fails as unreachable (down, not yet
    // back) or succeeds; once back, calls never fail again.
    let back = false;
    await waitFor(
      async () => {
        const pid = upstream.pid;
        if (pid !== null) seen.add(pid);
        try {
          const result = await upstream.call("echo", { message: "x" }, call);
          assert.equal(textOf(result), "Echo: x");
          back = true;
        } catch (error) {
          assert.ok(!back, `a call failed after the restart: ${error}`);
        }
        return back && upstream.restarts >= 1;
      },
      (done) => done,
      20_000,
    );
    // Calls for as long as a second (wrong) restart would take to come.
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      const result = await upstream.call("echo", { message: "y" }, call);
      assert.equal(textOf(result), "Echo: y");
      if (upstream.pid !== null) seen.add(upstream.pid);
    }
    assert.equal(upstream.restarts, 1);
    assert.equal(upstream.state, "healthy");
    assert.equal(seen.size, 2, `one new child: ${[...seen].join(", ")}`);
    assert.equal(
      lines.filter((line) => line.event === "upstream_restart_scheduled")
        .length,
      1,
    );
  } finally {
    await upstream.close();
  }
});
