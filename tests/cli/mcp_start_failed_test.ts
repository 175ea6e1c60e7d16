// `agentd mcp <server>` on stdio whose start fails stays up for the desktop
// client that spawned it: initialize and tools/list answer (the server's
// real tools), every tools/call answers isError with the reason and the fix,
// and a call after the cause is fixed starts the server. Only a bad command
// line still exits.

import assert from "node:assert/strict";
import { join } from "node:path";
import { Client } from "../../platform/mcp_sdk.ts";
import type { StdioClientTransport } from "../../platform/mcp_sdk_stdio_client.ts";
import { desktopControlServer } from "../../tools/desktop-control/mod.ts";
import {
  fixtureStdio,
  parseLogLine,
  runCli,
  tempDir,
  textOf,
  waitFor,
} from "../helpers.ts";

/** The child's stderr, collected; resolves once it ends. */
function collectStderr(
  transport: StdioClientTransport,
): { lines: () => string[]; ended: Promise<void> } {
  const chunks: string[] = [];
  const stream = transport.stderr;
  assert.ok(stream);
  const ended = new Promise<void>((resolve) => {
    stream.on("data", (chunk: unknown) => chunks.push(String(chunk)));
    stream.on("end", () => resolve());
  });
  return {
    lines: () => chunks.join("").split("\n").filter((line) => line !== ""),
    ended,
  };
}

Deno.test("mcp stdio: desktop-control without DISPLAY stays up, lists its tools and answers calls with the reason and the fix", async () => {
  await using dir = await tempDir();
  // The SDK gives the child a small default environment: no DISPLAY.
  const transport = fixtureStdio(
    ["mcp", "desktop-control", "--data-dir", dir.path],
    { NO_COLOR: "1" },
  );
  const stderr = collectStderr(transport);
  const client = new Client({ name: "start-failed", version: "1.0.0" });
  try {
    await client.connect(transport);
    assert.equal(client.getServerVersion()?.name, "agentd-desktop-control");

    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name).sort(),
      desktopControlServer.tools.map((tool) => tool.name).sort(),
    );

    for (const name of ["screenshot", "get_window_list"]) {
      const result = await client.callTool({ name, arguments: {} });
      assert.equal(result.isError, true, name);
      const text = textOf(result);
      assert.match(text, /Server "desktop-control" is not running/);
      assert.match(text, /DISPLAY is not set/);
      assert.match(text, /Xvfb :99/, "the fix");
      assert.match(text, /Each call retries the start/);
    }
  } finally {
    await client.close();
    await stderr.ended;
  }
  const logs = stderr.lines().map(parseLogLine);
  for (const [i, line] of logs.entries()) {
    assert.ok(line, `not a JSON log line: ${stderr.lines()[i]}`);
  }
  const failed = logs.find((line) => line?.event === "start_failed");
  assert.equal(failed?.level, "error");
  assert.match(String(failed?.error), /DISPLAY is not set/);
});

Deno.test("mcp stdio: memory with a bad config section stays up in error, and starts on the call after the file is fixed", async () => {
  await using dir = await tempDir();
  const config = join(dir.path, "agentd.json");
  await Deno.writeTextFile(
    config,
    JSON.stringify({ memory: { storage: "nowhere" } }),
  );
  const transport = fixtureStdio(
    ["mcp", "memory", "--config", config, "--data-dir", dir.path],
    { NO_COLOR: "1" },
  );
  const stderr = collectStderr(transport);
  const client = new Client({ name: "start-failed", version: "1.0.0" });
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "store_memory"));

    const store = () =>
      client.callTool({
        name: "store_memory",
        arguments: { namespace: "n", key: "k", value: "kept" },
      });
    const refused = await store();
    assert.equal(refused.isError, true);
    const text = textOf(refused);
    assert.match(text, /Server "memory" is not running/);
    // Where the bad value is, and what it may be.
    assert.match(text, new RegExp(`file ${config} memory\\.storage`));
    assert.match(text, /"local"\|"hosted"/);

    await Deno.writeTextFile(
      config,
      JSON.stringify({ memory: { storage: "local" } }),
    );
    // A retry runs at most every 2 s: call until one starts the server.
    const stored = await waitFor(store, (result) => result.isError !== true);
    assert.notEqual(stored.isError, true, textOf(stored));
    const back = await client.callTool({
      name: "retrieve_memory",
      arguments: { namespace: "n", key: "k" },
    });
    assert.match(textOf(back), /kept/);
  } finally {
    await client.close();
    await stderr.ended;
  }
  const events = stderr.lines().map((line) => parseLogLine(line)?.event);
  assert.ok(events.includes("start_retry"));
  assert.deepEqual(
    stderr.lines().map(parseLogLine).filter((line) => line?.event === "phase")
      .map((line) => `${line?.from}>${line?.to}`),
    ["start>error", "error>running", "running>shutdown"],
  );
});

Deno.test("mcp stdio: a bad flag value still exits with usage, before serving", async () => {
  await using dir = await tempDir();
  const result = await runCli([
    "mcp",
    "memory",
    "--storage",
    "nowhere",
    "--data-dir",
    dir.path,
  ]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /flag memory\.storage/);
  assert.equal(result.stdout, "");
});
