// Ctrl-C as a person meets it: `deno task start` in its own process group,
// the whole group signalled (the terminal's SIGINT, systemd's KillMode),
// the daemon drains and logs `stopped` with exit 0; a deliberate second
// signal later still forces the exit (130).

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
  signal(signal: "INT" | "TERM"): Promise<void>;
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
    async signal(signal) {
      const kill = await new Deno.Command("kill", {
        args: [`-${signal}`, "--", `-${pgid}`],
      }).output();
      assert.equal(kill.code, 0, new TextDecoder().decode(kill.stderr));
    },
  };
}

async function processGroupOf(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  // Fields after the parenthesised command: state ppid pgrp ...
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[2]);
}

const linux = Deno.build.os === "linux";

for (const signal of ["INT", "TERM"] as const) {
  Deno.test({
    name:
      `ctrl-c: SIG${signal} to the whole group of "deno task start" drains, logs stopped, exits 0`,
    ignore: !linux,
    async fn() {
      await using dir = await tempDir();
      const group = spawnGroup([
        Deno.execPath(),
        "task",
        "start",
        "--port",
        String(freePort()),
        "--data-dir",
        dir.path,
      ]);
      await waitFor(
        () => group.logs.some((log) => log.event === "listening"),
        (seen) => seen,
        60_000,
      );
      // The group really holds two deno processes (task + daemon) that
      // both receive the signal: the duplicate delivery the fix is about.
      assert.equal(await processGroupOf(group.pgid), group.pgid);

      await group.signal(signal);
      const status = await group.status;

      const events = group.logs.map((log) => log.event);
      assert.equal(status.code, 0, JSON.stringify(group.logs.slice(-5)));
      assert.ok(events.includes("shutdown"), events.join(","));
      assert.ok(events.includes("stopped"), events.join(","));
      const shutdown = group.logs.find((log) => log.event === "shutdown");
      assert.equal(shutdown?.signal, `SIG${signal}`);
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

    await group.signal("INT");
    await group.signal("INT"); // the same Ctrl-C delivered twice: ignored
    const first = Date.now();
    await waitFor(
      () => group.logs.some((log) => log.event === "shutdown"),
      (seen) => seen,
    );
    // Still draining once the window has passed: the duplicate did not exit.
    await waitFor(
      () => Date.now() - first > REPEAT_SIGNAL_WINDOW_MS,
      (passed) => passed,
    );
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    assert.equal(health.status, 503);
    await health.body?.cancel();

    await group.signal("INT"); // a person's deliberate second Ctrl-C
    const status = await group.status;
    await client.close().catch(() => {});
    await slow;
    assert.equal(status.code, 130);
    assert.ok(!group.logs.some((log) => log.event === "stopped"));
  },
});
