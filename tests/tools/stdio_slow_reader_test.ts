// `agentd mcp <server>` on a stdout pipe its client reads slowly
// (tests/tools/slow_reader.py): the client leaves the pipe full before
// reading, blocking as most clients hand it over and non-blocking as some do
// (the server's writes would meet WouldBlock), then ends the server's stdin.
// Every answer must still arrive whole, once and in order, and the server
// exit 0. A client that closes its end instead gets a server that logs the
// failed write once and exits, though its stdin stays open.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  FIXTURE_CLI,
  INITIALIZE_REQUEST,
  parseLogLine,
  ROOT,
  tempDir,
} from "../helpers.ts";

const CALLS = 400;

/** slow_reader.py in `mode` between the test and `agentd mcp conformance`. */
async function throughClient(
  mode: string,
  requests: unknown[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  await using dir = await tempDir();
  const client = new Deno.Command("python3", {
    args: [
      join(ROOT, "tests/tools/slow_reader.py"),
      mode,
      Deno.execPath(),
      "run",
      "-A",
      FIXTURE_CLI,
      "mcp",
      "conformance",
      "--data-dir",
      dir.path,
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = client.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(
      requests.map((request) => JSON.stringify(request) + "\n").join(""),
    ),
  );
  await writer.close();
  const { code, stdout, stderr } = await client.output();
  const decoder = new TextDecoder();
  return {
    code,
    stdout: decoder.decode(stdout),
    stderr: decoder.decode(stderr),
  };
}

const listCalls = (count: number) => [
  INITIALIZE_REQUEST,
  { jsonrpc: "2.0", method: "notifications/initialized" },
  ...Array.from({ length: count }, (_, index) => ({
    jsonrpc: "2.0",
    id: index + 2,
    method: "tools/list",
  })),
];

for (const mode of ["nonblocking", "blocking"]) {
  Deno.test(`stdio: a ${mode} stdout left full gets every answer, whole and in order`, async () => {
    const { code, stdout, stderr: errors } = await throughClient(
      mode,
      listCalls(CALLS),
    );

    assert.equal(code, 0, errors);
    assert.match(errors, /stdout pipe full/);
    const lines = stdout.split("\n");
    assert.equal(lines.pop(), "", "the last answer ends with a newline");
    assert.equal(lines.length, CALLS + 1, errors);
    const answers = lines.map((line): unknown => JSON.parse(line));
    assert.deepEqual(
      answers.map((answer) =>
        typeof answer === "object" && answer !== null && "id" in answer
          ? answer.id
          : undefined
      ),
      Array.from({ length: CALLS + 1 }, (_, index) => index + 1),
    );
    // Every tools/list answer is the same bytes: none cut or mixed with another.
    assert.equal(
      new Set(lines.slice(1).map((line) => line.replace(/"id":\d+/, ""))).size,
      1,
    );
    assert.ok(
      lines[1].length * CALLS > 4 * 65536,
      `answers of ${lines[1].length} bytes do not overflow the pipe`,
    );
    const logs = errors.split("\n").map(parseLogLine).filter((log) =>
      log !== undefined
    );
    assert.ok(!logs.some((log) => log.event === "stdio_error"), errors);
  });
}

Deno.test("stdio: a client that closes its end of stdout is logged and the server exits", async () => {
  const { code, stdout, stderr } = await throughClient(
    "closed",
    listCalls(20),
  );
  assert.equal(code, 0, stderr);
  assert.match(stdout, /"protocolVersion"/);
  const failures = stderr.split("\n").map(parseLogLine).filter((log) =>
    log?.event === "stdio_error"
  ).map((log) => JSON.stringify(log?.error));
  assert.equal(failures.length, 1, stderr);
  assert.match(failures[0], /Writing to stdout failed, closing: Broken pipe/);
});
