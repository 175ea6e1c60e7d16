// `agentd mcp <server>` on stdio with a client that frames badly: malformed
// and blank lines, CRLF, several messages in one write, and a last call with
// no newline before EOF. Each well-formed message is answered, a malformed
// line is logged and skipped (as the MCP SDK's transport does), stdout
// carries only JSON-RPC lines and the process exits 0.

import assert from "node:assert/strict";
import {
  DENO_LAUNCHER,
  INITIALIZE_REQUEST,
  parseLogLine,
  responseTo,
  spawnStdio,
  tempDir,
} from "../helpers.ts";

Deno.test("stdio: bad framing is skipped, every good message answered, a last line without newline too", async () => {
  await using dir = await tempDir();
  const session = spawnStdio(["mcp", "conformance", "--data-dir", dir.path]);
  const call = (id: number) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "test_simple_text", arguments: {} },
    });
  const text = JSON.stringify(INITIALIZE_REQUEST) + "\r\n" +
    "this is not json\n\n" +
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) +
    "\n" + call(2) + "\r\n" +
    JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list", extra: 1 }) +
    "\n" + call(4) + "\n" + call(5); // no newline: EOF ends it
  const bytes = new TextEncoder().encode(text);
  // Split mid-message, as a pipe may deliver it.
  await session.write(bytes.subarray(0, 50));
  await session.write(bytes.subarray(50));
  const status = await session.finish();
  const { stdout, stderr } = session;

  assert.equal(status.code, 0);
  for (const line of stdout) {
    const value: unknown = JSON.parse(line);
    assert.ok(
      typeof value === "object" && value !== null && "jsonrpc" in value,
    );
  }
  for (const id of [1, 2, 4, 5]) {
    const answer = responseTo(stdout, id);
    assert.ok(
      answer !== undefined && "result" in answer,
      `no result for ${id}`,
    );
  }
  assert.equal(
    responseTo(stdout, 3),
    undefined,
    "a message with an unknown member is skipped",
  );
  const logs = stderr.filter((line) => !DENO_LAUNCHER.test(line));
  const errors = logs.map(parseLogLine).filter((log) =>
    log?.event === "stdio_error"
  );
  assert.equal(errors.length, 2, logs.join("\n"));
});
