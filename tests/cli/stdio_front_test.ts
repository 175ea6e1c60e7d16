// The stdio front of `agentd mcp <server>` (cli/stdio_front.ts) answers
// initialize and tools/list before the server loads, then hands the stream
// over. These run main.ts as a desktop client does (a real process on
// stdio) with the front and with AGENTD_STDIO_FRONT=off, and compare: the
// front's answers are the real server's, tool calls right after tools/list,
// requests before `initialized` and pipelined ones are answered as without
// the front, and what the front cannot vouch for goes to the real server.

import assert from "node:assert/strict";
import { Client } from "../../platform/mcp_sdk.ts";
import { StdioClientTransport } from "../../platform/mcp_sdk_stdio_client.ts";
import { FRONT_SERVERS } from "../../cli/stdio_front.ts";
import { parseLogLine, ROOT, tempDir } from "../helpers.ts";

type Mode = "front" | "off";

function envOf(mode: Mode): Record<string, string> {
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "",
    HOME: Deno.env.get("HOME") ?? "",
  };
  if (mode === "off") env.AGENTD_STDIO_FRONT = "off";
  return env;
}

/** What `stdio_front` logged the front answered, or undefined if it never logged (no front). */
function frontAnswered(stderr: string): number | undefined {
  for (const line of stderr.split("\n")) {
    const entry = parseLogLine(line);
    if (entry?.event === "stdio_front") return Number(entry.answered);
  }
  return undefined;
}

/** An SDK client's view of a start: what initialize and tools/list gave it. */
async function sdkView(id: string, mode: Mode, dataDir: string) {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", "main.ts", "mcp", id, "--data-dir", dataDir],
    cwd: ROOT,
    env: envOf(mode),
    stderr: "pipe",
  });
  const chunks: string[] = [];
  const stderr = transport.stderr;
  assert.ok(stderr);
  const ended = new Promise<void>((resolve) => {
    stderr.on("data", (chunk: unknown) => chunks.push(String(chunk)));
    stderr.on("end", () => resolve());
  });
  const client = new Client({ name: "front-test", version: "1.0.0" });
  await client.connect(transport);
  const view = {
    serverInfo: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
    instructions: client.getInstructions(),
    tools: (await client.listTools()).tools,
  };
  // A tool call right after tools/list waits for the real server, and its answer is right.
  const called = id === "memory"
    ? await client.callTool({
      name: "store_memory",
      arguments: { namespace: "n", key: "k", value: "v" },
    })
    : undefined;
  const read = id === "memory"
    ? await client.callTool({
      name: "retrieve_memory",
      arguments: { namespace: "n", key: "k" },
    })
    : undefined;
  if (called) assert.match(JSON.stringify(called), /Stored/);
  if (read) assert.match(JSON.stringify(read), /"value":"v"/);
  // A call the front never answers: the real server took over (and logged) by its answer.
  await assert.rejects(
    client.callTool({ name: "no_such_tool", arguments: {} }),
    /no_such_tool/,
  );
  await client.close();
  await ended;
  return { view, answered: frontAnswered(chunks.join("")) };
}

for (const id of FRONT_SERVERS) {
  Deno.test(`stdio front: ${id}'s initialize and tools/list are the real server's`, async () => {
    await using dir = await tempDir();
    const front = await sdkView(id, "front", `${dir.path}/front`);
    const off = await sdkView(id, "off", `${dir.path}/off`);
    assert.ok(off.view.tools.length > 0);
    assert.deepEqual(front.view, off.view);
    assert.equal(off.answered, undefined, "no front when it is off");
    // initialize is written at spawn: the front has it before anything loads.
    assert.ok((front.answered ?? 0) >= 1, `front answered ${front.answered}`);
  });
}

/** Raw JSON-RPC lines written at spawn (before the process reads), the answers by id. */
async function rawRun(
  lines: readonly string[],
  mode: Mode,
  dataDir: string,
  expect: number,
  /** Written once the first `expect` answers are in; `more` answers then. */
  then: readonly string[] = [],
  more = 0,
): Promise<
  { answers: Map<unknown, unknown>; order: unknown[]; answered?: number }
> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", "mcp", "memory", "--data-dir", dataDir],
    cwd: ROOT,
    env: envOf(mode),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(lines.join("\n") + "\n"));
  const answers = new Map<unknown, unknown>();
  const order: unknown[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = child.stdout.getReader();
  let written = false;
  while (answers.size < expect + more) {
    if (!written && answers.size >= expect && then.length > 0) {
      await writer.write(new TextEncoder().encode(then.join("\n") + "\n"));
      written = true;
    }
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
      const message = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      answers.set(message.id, message);
      order.push(message.id);
    }
  }
  await writer.close();
  // Anything more (an answer twice) comes before stdout ends.
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
  }
  for (const line of buffer.split("\n").filter((l) => l !== "")) {
    order.push(JSON.parse(line).id);
  }
  const stderr = new TextDecoder().decode(
    await new Response(child.stderr).arrayBuffer(),
  );
  assert.equal((await child.status).code, 0, stderr);
  return { answers, order, answered: frontAnswered(stderr) };
}

const initialize = (id: number, protocolVersion: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion,
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    },
  });
const withCapabilities = (id: number, capabilities: unknown) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities,
      clientInfo: { name: "raw", version: "1" },
    },
  });
const request = (id: number, method: string, params?: unknown) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method,
    ...(params === undefined ? {} : { params }),
  });
const initialized = JSON.stringify({
  jsonrpc: "2.0",
  method: "notifications/initialized",
});
const call = (id: number, name: string, args: Record<string, unknown>) =>
  request(id, "tools/call", { name, arguments: args });

Deno.test("stdio front: calls before initialized, right after tools/list and pipelined keep their order and answers", async () => {
  await using dir = await tempDir();
  const lines = [
    // Not a version the SDK knows: it answers its latest, so must the front.
    initialize(1, "1999-01-01"),
    request(2, "tools/list"),
    request(3, "ping"),
    // Before initialized: waits for the real server, and so does all after it.
    call(4, "store_memory", { namespace: "n", key: "a", value: "first" }),
    initialized,
    call(5, "store_memory", { namespace: "n", key: "b", value: "second" }),
    request(6, "tools/list"),
    request(7, "ping"),
  ];
  // Once those are answered: reads of what the pipelined calls stored.
  const then = [
    call(8, "retrieve_memory", { namespace: "n", key: "a" }),
    call(9, "retrieve_memory", { namespace: "n", key: "b" }),
  ];
  const front = await rawRun(lines, "front", `${dir.path}/front`, 7, then, 2);
  const off = await rawRun(lines, "off", `${dir.path}/off`, 7, then, 2);
  assert.equal(
    front.answered,
    3,
    "initialize, tools/list and ping from the front",
  );
  assert.equal(off.answered, undefined);
  // Each request answered once, none twice (the real server's initialize answer is dropped).
  assert.deepEqual([...front.order].sort(), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  // The front's answers come first, in order; the rest after the handover.
  assert.deepEqual(front.order.slice(0, 3), [1, 2, 3]);
  // Entries carry the time they were stored: the rest must match.
  const timeless = (answers: Map<unknown, unknown>) =>
    [...answers].map(([id, answer]) => [
      id,
      JSON.stringify(answer).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>"),
    ]).sort();
  assert.deepEqual(timeless(front.answers), timeless(off.answers));
  const text = (id: number) => JSON.stringify(front.answers.get(id));
  assert.match(text(1), /"protocolVersion":"2025-11-25"/);
  assert.match(text(4), /Stored/);
  assert.match(text(8), /"value":"first"/);
  assert.match(text(9), /"value":"second"/);
});

Deno.test("stdio front: a first message that is not initialize, a malformed line, an odd initialize or a tools/list cursor reach the real server unanswered by the front", async () => {
  await using dir = await tempDir();
  const cases: [string, string[], number][] = [
    ["tools/list first", [
      request(1, "tools/list"),
      initialize(2, "2025-06-18"),
    ], 2],
    ["a malformed first line", ["{not json", initialize(2, "2025-06-18")], 1],
    [
      "a cursor",
      [
        initialize(1, "2025-06-18"),
        initialized,
        request(2, "tools/list", { cursor: "x" }),
        request(3, "tools/list"),
      ],
      3,
    ],
    [
      "an initialize the front does not vouch for",
      [
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {} },
        }),
        request(2, "ping"),
      ],
      2,
    ],
    [
      "a client capability of a shape the front does not vouch for",
      [
        withCapabilities(1, { roots: { listChanged: "yes" } }),
        request(2, "ping"),
      ],
      2,
    ],
  ];
  for (const [index, [what, lines, expect]] of cases.entries()) {
    if (index === 0) {
      // The shapes the front does answer: a client's usual capabilities.
      const usual = [
        withCapabilities(1, {
          roots: { listChanged: true },
          sampling: {},
          elicitation: { form: {}, url: {} },
          tasks: { requests: { elicitation: { create: {} } } },
        }),
        request(2, "ping"),
      ];
      const front = await rawRun(usual, "front", `${dir.path}/fu`, 2);
      const off = await rawRun(usual, "off", `${dir.path}/ou`, 2);
      assert.deepEqual(front.answers, off.answers, "usual capabilities");
      assert.equal(front.answered, 2, "usual capabilities");
    }
    const front = await rawRun(lines, "front", `${dir.path}/f${index}`, expect);
    const off = await rawRun(lines, "off", `${dir.path}/o${index}`, expect);
    assert.deepEqual(front.answers, off.answers, what);
    assert.equal(front.order.length, expect, what);
    const answered = what === "a cursor" ? 1 : 0;
    assert.equal(front.answered, answered, what);
  }
});
