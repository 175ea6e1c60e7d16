// Routing stats in /metrics: a call forced past a dead replica is counted as
// a reroute of the upstream it was meant for, and each upstream's calls,
// errors and error rate follow what happened.

import assert from "node:assert/strict";
import { join } from "node:path";
import { loggedAll, spawnDaemon, tempDir } from "../../helpers.ts";
import {
  call,
  gatewayClient,
  startEverythingHttp,
  textOf,
  writeConfig,
} from "./upstreams.ts";

/** The value of one sample line of the exposition, or undefined. */
function sample(
  metrics: string,
  name: string,
  upstream: string,
): number | undefined {
  const line = metrics.split("\n").find((candidate) =>
    candidate.startsWith(
      `${name}{upstream="${upstream}",group="everything"} `,
    )
  );
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

Deno.test("gateway: /metrics counts a forced reroute and each upstream's error rate", async () => {
  await using dir = await tempDir();
  const a = await startEverythingHttp();
  await using b = await startEverythingHttp();
  const config = await writeConfig(dir.path, {
    // No check runs during the test: only the call finds out that ev-a died.
    health_interval_ms: 3_600_000,
    upstreams: {
      "ev-a": { url: a.url, group: "everything" },
      "ev-b": { url: b.url, group: "everything" },
    },
  });
  const daemon = await spawnDaemon([
    "mcp",
    "gateway",
    "--port",
    "0",
    "--config",
    config,
    "--data-dir",
    join(dir.path, "data"),
  ]);
  try {
    await using client = await gatewayClient(daemon.url);
    const metrics = async () =>
      await (await fetch(`${daemon.url}/metrics`)).text();
    const before = await metrics();
    assert.equal(sample(before, "agentd_gateway_reroutes_total", "ev-a"), 0);
    assert.equal(
      sample(before, "agentd_gateway_upstream_error_rate", "ev-a"),
      0,
    );

    // ev-a dies unnoticed; a call meant for it goes to ev-b.
    await a.kill();
    const forced = await call(client, "route_tool_call", {
      server: "ev-a",
      tool: "echo",
      args: { message: "forced" },
    });
    assert.equal(textOf(forced), "Echo: forced");
    assert.equal(forced._meta?.["io.agentd/upstream"], "ev-b");
    // Now known down, ev-a is passed over again, also a reroute.
    const known = await call(client, "route_tool_call", {
      server: "ev-a",
      tool: "echo",
      args: { message: "known" },
    });
    assert.equal(known._meta?.["io.agentd/upstream"], "ev-b");
    // A call ev-b answers with an error.
    const failed = await call(client, "route_tool_call", {
      server: "ev-b",
      tool: "echo",
      args: {},
    });
    assert.equal(failed.isError, true);

    const after = await metrics();
    const of = (name: string, upstream: string) =>
      sample(after, `agentd_gateway_${name}`, upstream);
    assert.equal(of("reroutes_total", "ev-a"), 2, after);
    assert.equal(of("reroutes_total", "ev-b"), 0);
    assert.equal(of("upstream_calls_total", "ev-a"), 1);
    assert.equal(of("upstream_errors_total", "ev-a"), 1);
    assert.equal(of("upstream_error_rate", "ev-a"), 1);
    assert.equal(of("upstream_calls_total", "ev-b"), 3);
    assert.equal(of("upstream_errors_total", "ev-b"), 1);
    assert.equal(of("upstream_error_rate", "ev-b"), 1 / 3);
    assert.equal(of("upstream_up", "ev-a"), 0);
    assert.match(after, /# TYPE agentd_gateway_reroutes_total counter/);
    assert.match(after, /# TYPE agentd_gateway_upstream_error_rate gauge/);
    const reroutes = await loggedAll(
      daemon.logs,
      (line) => line.event === "reroute",
      2,
    );
    assert.deepEqual(
      reroutes.map((line) => [line.from, line.to]),
      [["ev-a", "ev-b"], ["ev-a", "ev-b"]],
    );
  } finally {
    await a.kill();
    assert.equal((await daemon.stop()).code, 0);
  }
});
