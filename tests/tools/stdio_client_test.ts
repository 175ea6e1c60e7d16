// The kit's stdio client transport (the gateway's stdio upstreams): line
// framing (split lines, CRLF, several messages per chunk, characters split
// across chunks), the envelope check, and a real child's lifecycle
// (environment, cwd, stderr lines, a killed child, close with SIGTERM for a
// child that ignores stdin's end).

import assert from "node:assert/strict";
import type { JSONRPCMessage } from "../../platform/mcp_sdk.ts";
import { readLines } from "../../platform/line_frames.ts";
import { StdioUpstreamTransport } from "../../tools/kit/transport/stdio_client.ts";
import { tempDir, waitFor } from "../helpers.ts";

function byteStream(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const chunk = chunks[next++];
      if (chunk !== undefined) return controller.enqueue(chunk);
      controller.close();
      // A pending BYOB read ends only when answered with no bytes.
      controller.byobRequest?.respond(0);
    },
  });
}

Deno.test("stdio framing over a BYOB pipe: split lines, CRLF, many per chunk, split characters, a last line without newline", async () => {
  const bytes = new TextEncoder().encode(
    '{"a":1}\r\n{"b":"é€"}\n\n{"c":3}\n{"d":4}\r\n{"e":5}',
  );
  // Cut at every offset pair, so lines and the two- and three-byte characters split everywhere.
  for (let first = 1; first < bytes.length - 1; first += 3) {
    for (let second = first + 1; second < bytes.length; second += 5) {
      const lines: string[] = [];
      await readLines(
        byteStream([
          bytes.slice(0, first),
          bytes.slice(first, second),
          bytes.slice(second),
        ]),
        { line: (line) => lines.push(line), oversized: () => {} },
      );
      assert.deepEqual(lines, [
        '{"a":1}',
        '{"b":"é€"}',
        '{"c":3}',
        '{"d":4}',
        '{"e":5}',
      ], `cut at ${first}, ${second}`);
    }
  }
});

// A child that answers each request with its params, its env and cwd, and says hello on stderr.
const ECHO_CHILD = `
process.stderr.write("hello from stderr\\nsecond line\\n");
if (process.argv.includes("ignore-eof")) process.stdin.on("end", () => setInterval(() => {}, 1000));
let rest = "";
process.stdin.on("data", (chunk) => {
  const text = rest + chunk;
  const lines = text.split("\\n");
  rest = lines.pop();
  let out = "";
  for (const line of lines) {
    if (!line) continue;
    const message = JSON.parse(line);
    if (message.method === "garbage") { out += "not json\\n" + JSON.stringify({ nope: 1 }) + "\\n"; continue; }
    out += JSON.stringify({ jsonrpc: "2.0", id: message.id, result: {
      params: message.params, marker: process.env.MARKER ?? null, cwd: process.cwd(),
      home: process.env.HOME ?? null, secret: process.env.NOT_PASSED ?? null,
    } }) + "\\r\\n";
  }
  process.stdout.write(out);
});
`;

function echoChild(
  cwd: string,
  mode = "",
): { transport: StdioUpstreamTransport; stderr: string[] } {
  const stderr: string[] = [];
  const transport = new StdioUpstreamTransport({
    command: "node",
    args: ["-e", ECHO_CHILD, "--", mode],
    env: { MARKER: "m1" },
    cwd,
    onStderrLine: (line) => stderr.push(line),
  });
  return { transport, stderr };
}

Deno.test("stdio transport: a real child gets the default env plus its own and the cwd; 50 messages of one turn all answered; bad lines are errors", async () => {
  await using dir = await tempDir();
  Deno.env.set("NOT_PASSED", "leak");
  const { transport, stderr } = echoChild(dir.path);
  const messages: JSONRPCMessage[] = [];
  const errors: string[] = [];
  let closed = 0;
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error.message);
  transport.onclose = () => closed++;
  try {
    await transport.start();
    assert.ok(transport.pid, "a pid while it runs");
    const sent = Array.from({ length: 50 }, (_, id) =>
      transport.send({
        jsonrpc: "2.0",
        id,
        method: "echo",
        params: { n: id },
      }));
    await Promise.all(sent);
    const answers = await waitFor(() => messages, (all) => all.length === 50);
    for (const [id, answer] of answers.entries()) {
      assert.deepEqual(answer, {
        jsonrpc: "2.0",
        id,
        result: {
          params: { n: id },
          marker: "m1",
          cwd: await Deno.realPath(dir.path),
          home: Deno.env.get("HOME") ?? null,
          secret: null,
        },
      });
    }
    await transport.send({ jsonrpc: "2.0", id: 99, method: "garbage" });
    await waitFor(() => errors, (all) => all.length === 2);
    assert.match(errors[1], /not a JSON-RPC 2.0 message/);
    assert.equal(messages.length, 50, "no message from the bad lines");
    await waitFor(() => stderr, (lines) => lines.length === 2);
    assert.deepEqual(stderr, ["hello from stderr", "second line"]);
  } finally {
    Deno.env.delete("NOT_PASSED");
    await transport.close();
  }
  await waitFor(() => closed, (count) => count === 1);
  assert.equal(transport.pid, null);
  await assert.rejects(
    transport.send({ jsonrpc: "2.0", id: 1, method: "echo" }),
    /Not connected/,
  );
});

Deno.test("stdio transport: a killed child closes the transport once; close ends a child that ignores stdin's end", async () => {
  await using dir = await tempDir();
  const killed = echoChild(dir.path);
  let closed = 0;
  killed.transport.onclose = () => closed++;
  await killed.transport.start();
  const pid = killed.transport.pid;
  assert.ok(pid);
  Deno.kill(pid, "SIGKILL");
  await waitFor(() => closed, (count) => count === 1);
  assert.equal(killed.transport.pid, null);
  await assert.rejects(
    killed.transport.send({ jsonrpc: "2.0", id: 1, method: "echo" }),
    /Not connected/,
  );
  await killed.transport.close();
  assert.equal(closed, 1);

  const stubborn = echoChild(dir.path, "ignore-eof");
  let stubbornClosed = 0;
  stubborn.transport.onclose = () => stubbornClosed++;
  await stubborn.transport.start();
  const stubbornPid = stubborn.transport.pid;
  assert.ok(stubbornPid);
  // The child is running (it answers) before close.
  const answered = new Promise<void>((resolve) => {
    stubborn.transport.onmessage = () => resolve();
  });
  await stubborn.transport.send({ jsonrpc: "2.0", id: 1, method: "echo" });
  await answered;
  await stubborn.transport.close();
  await waitFor(() => stubbornClosed, (count) => count === 1);
  assert.throws(() => Deno.kill(stubbornPid, "SIGCONT"), "the child is gone");
});

Deno.test("stdio transport: close ends a child that stopped reading its stdin, with a write still pending", async () => {
  await using dir = await tempDir();
  const transport = new StdioUpstreamTransport({
    command: "sleep",
    args: ["30"],
    env: {},
    cwd: dir.path,
    onStderrLine: () => {},
  });
  let closed = 0;
  transport.onclose = () => closed++;
  await transport.start();
  const pid = transport.pid;
  assert.ok(pid);
  // More than a pipe holds (64 KiB): the write stays pending, the child never reads.
  const pending = transport.send({
    jsonrpc: "2.0",
    id: 1,
    method: "echo",
    params: { text: "x".repeat(1024 * 1024) },
  });
  pending.catch(() => {});
  // One macrotask: the writer's queued microtasks have handed the bytes to the pipe.
  await new Promise((resolve) => setTimeout(resolve, 0));
  await transport.close();
  await waitFor(() => closed, (count) => count === 1);
  assert.throws(() => Deno.kill(pid, "SIGCONT"), "the child is gone");
  await assert.rejects(pending);
});

Deno.test("stdio transport: a command that does not exist rejects start with node's ENOENT wording", async () => {
  const transport = new StdioUpstreamTransport({
    command: "agentd-no-such-command",
    args: [],
    env: {},
    onStderrLine: () => {},
  });
  await assert.rejects(
    transport.start(),
    /spawn agentd-no-such-command ENOENT/,
  );
  assert.equal(transport.pid, null);
});
