// `agentd mcp <server>` on stdio, driven by the MCP SDK client spawning the
// real CLI; and a raw session proving stdout carries only MCP messages.

import assert from "node:assert/strict";
import { Client } from "../../platform/mcp_sdk.ts";
import {
  DENO_LAUNCHER,
  fixtureStdio,
  INITIALIZE_REQUEST,
  parseLogLine,
  responseTo,
  spawnStdio,
  tempDir,
  waitFor,
} from "../helpers.ts";

Deno.test("stdio: the SDK client lists and calls tools, reads resources and prompts", async () => {
  await using dir = await tempDir();
  const transport = fixtureStdio(
    ["mcp", "conformance", "--data-dir", dir.path],
    { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "" },
  );
  const stderr: string[] = [];
  const stderrDone = new Promise<void>((resolve) => {
    const stream = transport.stderr;
    assert.ok(stream);
    stream.on("data", (chunk: unknown) => stderr.push(String(chunk)));
    stream.on("end", () => resolve());
  });
  const client = new Client({ name: "stdio-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    assert.equal(client.getServerVersion()?.name, "agentd-conformance");
    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === "test_simple_text"));
    const schema = tools.find((tool) => tool.name === "slow_write")
      ?.inputSchema;
    assert.deepEqual(schema?.required, ["key", "value", "delay_ms"]);
    assert.equal(schema?.additionalProperties, false);

    const simple = await client.callTool({
      name: "test_simple_text",
      arguments: {},
    });
    assert.deepEqual(simple.content, [{
      type: "text",
      text: "This is a simple text response for testing.",
    }]);

    const written = await client.callTool({
      name: "slow_write",
      arguments: { key: "κλειδί ✓", value: "ünïcödé 🚀", delay_ms: 0 },
    });
    assert.equal(written.isError, undefined);

    const bad = await client.callTool({
      name: "slow_write",
      arguments: { key: "", value: 1 },
    });
    assert.equal(bad.isError, true);
    const message = JSON.stringify(bad.content);
    assert.match(message, /Invalid arguments for slow_write/);
    assert.match(message, /key:/);
    assert.match(message, /value:/);
    assert.match(message, /delay_ms:/);

    const unknownKey = await client.callTool({
      name: "test_simple_text",
      arguments: { nope: 1 },
    });
    assert.equal(unknownKey.isError, true);
    assert.match(JSON.stringify(unknownKey.content), /nope/);

    await assert.rejects(
      client.callTool({ name: "no_such_tool", arguments: {} }),
      /Unknown tool "no_such_tool"/,
    );

    const failing = await client.callTool({
      name: "test_error_handling",
      arguments: {},
    });
    assert.equal(failing.isError, true);
    assert.match(
      JSON.stringify(failing.content),
      /test_error_handling failed: This tool intentionally/,
    );

    const resource = await client.readResource({
      uri: "test://template/42/data",
    });
    const first = resource.contents[0];
    assert.ok(first && "text" in first);
    assert.deepEqual(JSON.parse(first.text), {
      id: "42",
      templateTest: true,
      data: "Data for ID: 42",
    });
    await assert.rejects(
      client.readResource({ uri: "test://nothing" }),
      /Resource not found/,
    );

    const prompt = await client.getPrompt({
      name: "test_prompt_with_arguments",
      arguments: { arg1: "a", arg2: "b" },
    });
    assert.deepEqual(prompt.messages[0]?.content, {
      type: "text",
      text: "Prompt with arguments: arg1='a', arg2='b'",
    });
    await assert.rejects(
      client.getPrompt({
        name: "test_prompt_with_arguments",
        arguments: { arg1: "a" },
      }),
      /arg2/,
    );
    const completion = await client.complete({
      ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
      argument: { name: "arg1", value: "b" },
    });
    assert.deepEqual(completion.completion.values, ["beta"]);
  } finally {
    await client.close();
    await stderrDone;
  }
  const logLines = stderr.join("").split("\n").filter((line) =>
    line.trim() !== ""
  );
  assert.ok(logLines.length > 0, "expected log lines on stderr");
  for (const line of logLines) {
    assert.ok(parseLogLine(line), `not a JSON log line: ${line}`);
  }
  assert.ok(logLines.some((line) => parseLogLine(line)?.event === "tool_call"));
});

Deno.test("stdio: stdout carries only JSON-RPC messages; logs are JSON lines on stderr; EOF exits 0", async () => {
  await using dir = await tempDir();
  const session = spawnStdio([
    "mcp",
    "conformance",
    "--data-dir",
    dir.path,
    "--log-level",
    "debug",
  ]);
  await session.send(INITIALIZE_REQUEST);
  await session.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await session.send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  const call = (id: number, name: string) =>
    session.send({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name, arguments: {} },
    });
  await call(3, "test_tool_with_logging");
  await call(4, "test_error_handling");
  // Calls run concurrently: wait for both answers before closing stdin.
  await waitFor(
    () => [responseTo(session.stdout, 3), responseTo(session.stdout, 4)],
    (answers) => answers.every((answer) => answer !== undefined),
  );
  const status = await session.finish();

  assert.equal(status.code, 0);
  const parsed = session.stdout.map((line) => {
    const value: unknown = JSON.parse(line); // throws on anything but JSON
    assert.ok(
      typeof value === "object" && value !== null && "jsonrpc" in value,
      line,
    );
    return value;
  });
  const ids = parsed.flatMap((value) => ("id" in value ? [value.id] : []));
  assert.deepEqual(ids.toSorted(), [1, 2, 3, 4]);
  assert.ok(
    parsed.some((value) =>
      "method" in value && value.method === "notifications/message"
    ),
    "the logging tool's messages travel as MCP notifications",
  );
  const logs = session.stderr.filter((line) =>
    line.trim() !== "" && !DENO_LAUNCHER.test(line)
  );
  assert.ok(logs.length > 0);
  for (const line of logs) {
    assert.ok(parseLogLine(line), `not a JSON log line: ${line}`);
  }
  const events = logs.map((line) => parseLogLine(line)?.event);
  assert.ok(events.includes("tool_call"));
  assert.ok(events.includes("stopped"));
});
