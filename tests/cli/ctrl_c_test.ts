// Ctrl-C as a person meets it: `deno task start` in its own process group,
// the whole group signalled (the terminal's SIGINT, systemd's KillMode) while
// a call runs; the call is answered, the daemon logs `stopped` and exits 0.
// A deliberate second signal after the repeat window still forces exit 130.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { REPEAT_SIGNAL_WINDOW_MS } from "../../platform/lifecycle.ts";
import {
  FIXTURE_CLI,
  freePort,
  lines,
  type LogLine,
  parseLogLine,
  ROOT,
  tempDir,
  waitFor,
} from "../helpers.ts";

interface Group {
  pgid: number;
  logs: LogLine[];
  status: Promise<Deno.CommandStatus>;
  /** Signals every process in the group, as a terminal or supervisor does. */
  signal(signal: "INT" | "TERM" | "KILL"): void;
}

/** Runs `command` as the leader of a new session and process group (setsid). */
function spawnGroup(command: string[]): Group {
  const process = new Deno.Command("setsid", {
    args: command,
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const logs: LogLine[] = [];
  const drained = (async () => {
    for await (const line of lines(process.stderr)) {
      const parsed = parseLogLine(line);
      if (parsed) logs.push(parsed);
    }
  })();
  // setsid execs in place (the child is no group leader), so pid == pgid.
  const pgid = process.pid;
  return {
    pgid,
    logs,
    status: Promise.all([process.status, drained]).then(([status]) => status),
    signal(signal) {
      // A negative pid is the whole process group, as `kill -- -<pgid>`.
      Deno.kill(-pgid, `SIG${signal}`);
    },
  };
}

/** The pids whose process group is `pgid` (from /proc). */
async function groupMembers(pgid: number): Promise<number[]> {
  const members: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let stat: string;
    try {
      stat = await Deno.readTextFile(`/proc/${entry.name}/stat`);
    } catch {
      continue; // exited meanwhile
    }
    // Fields after the parenthesised command: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid) members.push(Number(entry.name));
  }
  return members;
}

const linux = Deno.build.os === "linux";

/** An HTTP server that answers only once released: keeps a probe of it running. */
function heldSite() {
  const release = Promise.withResolvers<void>();
  const requested = Promise.withResolvers<void>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async () => {
      requested.resolve();
      await release.promise;
      return new Response("not an MCP server", { status: 404 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/mcp`,
    requested: requested.promise,
    release: () => release.resolve(),
    async close() {
      release.resolve();
      await server.shutdown();
    },
  };
}

for (const signal of ["INT", "TERM"] as const) {
  Deno.test({
    name:
      `ctrl-c: SIG${signal} to the whole group of "deno task start" lets the running call finish, logs stopped, exits 0`,
    ignore: !linux,
    async fn() {
      await using dir = await tempDir();
      const site = heldSite();
      const port = freePort();
      const group = spawnGroup([
        Deno.execPath(),
        "task",
        "start",
        "--port",
        String(port),
        "--data-dir",
        dir.path,
      ]);
      const client = new Client({ name: "ctrl-c", version: "1.0.0" });
      try {
        await waitFor(
          () => group.logs.some((log) => log.event === "listening"),
          (seen) => seen,
          60_000,
        );
        // The group really holds two deno processes (task + daemon) that
        // both receive the signal: the duplicate delivery the fix is about.
        const members = await groupMembers(group.pgid);
        assert.ok(members.includes(group.pgid), `${members}`);
        assert.ok(members.length >= 2, `one process in the group: ${members}`);

        await client.connect(
          new StreamableHTTPClientTransport(
            new URL(`http://127.0.0.1:${port}/mcp/gateway`),
          ),
        );
        // register_server probes the held site: a call that runs until released.
        const call = client.callTool({
          name: "register_server",
          arguments: { name: "held", url: site.url },
        }).catch((error: unknown) => error);
        await site.requested;

        group.signal(signal);
        await waitFor(
          () => group.logs.some((log) => log.event === "shutdown"),
          (seen) => seen,
        );
        site.release();

        // The call was answered (the probe's verdict), not cut off.
        const result = await call;
        const logs = JSON.stringify(group.logs.slice(-8));
        assert.ok(!(result instanceof Error), `${result}; ${logs}`);
        // Its text gives the site's status, sent only after the signal (not
        // its body: a probed URL's page is never echoed).
        assert.match(
          JSON.stringify(result),
          /Error POSTing to endpoint: HTTP 404 Not Found/,
          logs,
        );

        const status = await group.status;
        const events = group.logs.map((log) => log.event);
        assert.equal(status.code, 0, logs);
        assert.ok(events.includes("stopped"), events.join(","));
        const shutdown = group.logs.find((log) => log.event === "shutdown");
        assert.equal(shutdown?.signal, `SIG${signal}`);
        assert.equal(shutdown?.in_flight, 1);
      } finally {
        await client.close().catch(() => {});
        try {
          group.signal("KILL");
        } catch {
          // already exited
        }
        await group.status;
        await site.close();
      }
    },
  });
}

Deno.test({
  name:
    "ctrl-c: a second SIGINT after the repeat window forces exit 130 during a stuck drain",
  ignore: !linux,
  async fn() {
    await using dir = await tempDir();
    const port = freePort();
    const group = spawnGroup([
      Deno.execPath(),
      "run",
      "-A",
      FIXTURE_CLI,
      "serve",
      "--port",
      String(port),
      "--data-dir",
      dir.path,
    ]);
    await waitFor(
      () => group.logs.some((log) => log.event === "listening"),
      (seen) => seen,
      60_000,
    );
    const client = new Client({ name: "ctrl-c", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL(`http://127.0.0.1:${port}/mcp/conformance`),
      ),
    );
    // A call that outlives the test keeps the drain busy.
    const slow = client.callTool({
      name: "slow_write",
      arguments: { key: "stuck", value: "never", delay_ms: 60_000 },
    }).catch(() => undefined);
    await waitFor(
      () => fetch(`http://127.0.0.1:${port}/health`).then((r) => r.text()),
      (text) => text.includes('"in_flight":1'),
    );

    group.signal("INT");
    const shutdown = await waitFor(
      () => group.logs.find((log) => log.event === "shutdown"),
      (log) => log !== undefined,
    );
    // The daemon logged `shutdown` after taking the signal: past the window
    // from that log line, the next signal is a deliberate one. Still draining.
    const first = Date.parse(shutdown?.time ?? "");
    await waitFor(
      () => Date.now() - first > REPEAT_SIGNAL_WINDOW_MS,
      (passed) => passed,
    );
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(health.status, 503);
    await health.body?.cancel();

    group.signal("INT"); // a person's deliberate second Ctrl-C
    const status = await group.status;
    await client.close().catch(() => {});
    await slow;
    assert.equal(status.code, 130);
    assert.ok(!group.logs.some((log) => log.event === "stopped"));
    assert.deepEqual(
      group.logs.filter((log) => log.event === "signal_repeat").map((log) =>
        log.action
      ),
      ["exit"],
    );
  },
});
