// agentd's MCP transports against a named peer, in one run, as ratios.
//
// The peer is the MCP reference server @modelcontextprotocol/server-everything
// (pinned in deno.json), run with Node (set BENCH_PEER_RUNTIME=deno to run it
// with Deno instead, which separates runtime from implementation). agentd is
// the conformance fixture server, spawned through tests/fixtures/agentd.ts.
// Every server is a child process started once at module load; one MCP SDK
// Client per server drives it, so client-side cost is the same for both sides.
//
// Measured, per transport (stdio, streamable HTTP):
//   tools/call  one trivial call: agentd `test_simple_text`, peer `echo`
//   tools/list  the raw request; the SDK Client's listTools() also compiles an
//               ajv validator per tool with an outputSchema on every call,
//               client-side work that is not the server's round trip
// Printed besides the bench table: resident set size (VmRSS) of each server
// after warm-up, and VmRSS/VmHWM after the run, as agentd/peer ratios.
//
//   deno task bench

import { fileURLToPath } from "node:url";
import { z } from "zod";
import { Client, StreamableHTTPClientTransport } from "../platform/mcp_sdk.ts";
import {
  agentdPort,
  callOnce,
  EVERYTHING as PEER,
  EVERYTHING_DIR as PEER_DIR,
  everythingPort as peerPort,
  freePort,
  packageVersion,
  portFromOutput,
  stdioClient,
} from "./mcp_lib.ts";
import {
  atCleanUp,
  cleanUp,
  DENO,
  killOnExit,
  nodeVersion,
  printMemoryTable,
  ROOT,
  tempDir,
} from "./bench_lib.ts";

const AGENTD = fileURLToPath(
  new URL("../tests/fixtures/agentd.ts", import.meta.url),
);
const PEER_RUNTIME = Deno.env.get("BENCH_PEER_RUNTIME") === "deno"
  ? "deno"
  : "node";
const WARMUP = 300;
const dataDir = () => tempDir("agentd-bench-");

type ServerKind = "agentd" | "peer";
type TransportKind = "stdio" | "http";
type Operation = "tools/call" | "tools/list";

interface Target {
  label: string;
  kind: ServerKind;
  transport: TransportKind;
  pid: number;
  /** Spawn to initialized MCP session, one sample. */
  readyMs: number;
  call: () => Promise<void>;
  list: () => Promise<void>;
}

// ------------------------------------------------------------------ checks

const ToolList = z.object({
  tools: z.array(z.object({ name: z.string() }).loose()),
});

/** Tool counts and tools/list payload sizes, for the summary. */
const listShape = new Map<string, { tools: number; bytes: number }>();

function listOnce(client: Client, label: string): () => Promise<void> {
  return async () => {
    const result = await client.request(
      { method: "tools/list", params: {} },
      ToolList,
    );
    if (!listShape.has(label)) {
      listShape.set(label, {
        tools: result.tools.length,
        bytes: JSON.stringify(result).length,
      });
    }
  };
}

// ---------------------------------------------------------------- spawning

function peerCommand(mode: "stdio" | "streamableHttp"): [string, string[]] {
  return PEER_RUNTIME === "deno"
    ? [DENO, ["run", "-A", PEER, mode]]
    : ["node", [PEER, mode]];
}

async function stdioTarget(
  label: string,
  kind: ServerKind,
  command: string,
  args: string[],
  tool: { name: string; args: Record<string, unknown>; expected: string },
): Promise<Target> {
  const started = performance.now();
  const { client, pid } = await stdioClient(label, command, args);
  const readyMs = performance.now() - started;
  killOnExit(pid);
  return {
    label,
    kind,
    transport: "stdio",
    pid,
    readyMs,
    call: callOnce(client, tool.name, tool.args, tool.expected),
    list: listOnce(client, label),
  };
}

async function httpTarget(
  label: string,
  kind: ServerKind,
  command: string,
  args: string[],
  env: Record<string, string>,
  match: (line: string) => number | undefined,
  path: string,
  tool: { name: string; args: Record<string, unknown>; expected: string },
): Promise<Target> {
  const started = performance.now();
  const child = new Deno.Command(command, {
    args,
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  killOnExit(child.pid);
  const port = await portFromOutput(label, child.stderr, match);
  const transport = new StreamableHTTPClientTransport(
    new URL(`http://127.0.0.1:${port}${path}`),
  );
  const client = new Client({ name: "agentd-bench", version: "1.0.0" });
  await client.connect(transport);
  const readyMs = performance.now() - started;
  return {
    label,
    kind,
    transport: "http",
    pid: child.pid,
    readyMs,
    call: callOnce(client, tool.name, tool.args, tool.expected),
    list: listOnce(client, label),
  };
}

// ------------------------------------------------------------------ memory

function printMemory(title: string, targets: Target[], first: boolean): void {
  printMemoryTable(title, targets, {
    nameColumn: "server",
    name: (target) => `${target.label} (${target.transport})`,
    versus: "agentd/peer",
    against: (target) =>
      target.kind === "agentd"
        ? targets.find((t) =>
          t.kind === "peer" && t.transport === target.transport
        )
        : undefined,
    first,
    more: (target) => {
      const shape = listShape.get(target.label);
      return {
        "tools/list": shape ? `${shape.tools} tools, ${shape.bytes} B` : "",
      };
    },
  });
}

// ------------------------------------------------------------------- setup

const targets: Target[] = [];
const env = Deno.env.toObject();
const peerTool = {
  name: "echo",
  args: { message: "bench" },
  expected: "Echo: bench",
};
const agentdTool = {
  name: "test_simple_text",
  args: {},
  expected: "This is a simple text response for testing.",
};
const peerName = `peer: server-everything (${PEER_RUNTIME})`;

try {
  const [peerCmd, peerArgs] = peerCommand("stdio");
  targets.push(
    await stdioTarget(peerName, "peer", peerCmd, peerArgs, peerTool),
    await stdioTarget(
      "agentd mcp",
      "agentd",
      DENO,
      ["run", "-A", AGENTD, "mcp", "conformance", "--data-dir", dataDir()],
      agentdTool,
    ),
  );
  const [httpCmd, httpArgs] = peerCommand("streamableHttp");
  targets.push(
    await httpTarget(
      peerName,
      "peer",
      httpCmd,
      httpArgs,
      { ...env, PORT: String(freePort()) },
      peerPort,
      "/mcp",
      peerTool,
    ),
    await httpTarget(
      "agentd serve",
      "agentd",
      DENO,
      ["run", "-A", AGENTD, "serve", "--port", "0", "--data-dir", dataDir()],
      env,
      agentdPort,
      "/mcp/conformance",
      agentdTool,
    ),
    await httpTarget(
      "agentd mcp --port",
      "agentd",
      DENO,
      [
        "run",
        "-A",
        AGENTD,
        "mcp",
        "conformance",
        "--port",
        "0",
        "--data-dir",
        dataDir(),
      ],
      env,
      agentdPort,
      "/mcp",
      agentdTool,
    ),
  );
  for (const target of targets) {
    for (let i = 0; i < WARMUP; i++) {
      await target.call();
      await target.list();
    }
  }
} catch (error) {
  cleanUp();
  throw error;
}
// Runs first at clean-up (at unload), while the servers are still up.
atCleanUp(() =>
  printMemory("Memory after the benchmarks (VmRSS, VmHWM)", targets, false)
);

const peerVersion = packageVersion(PEER_DIR);
const peerRuntime = PEER_RUNTIME === "deno"
  ? `Deno ${Deno.version.deno}`
  : `Node ${nodeVersion()}`;
console.log(
  `agentd (Deno ${Deno.version.deno}) vs @modelcontextprotocol/server-everything ` +
    `${peerVersion} (${peerRuntime}); client: MCP SDK Client in this process`,
);
printMemory(
  `Memory after ${WARMUP} warm-up calls and lists each (VmRSS, VmHWM)`,
  targets,
  true,
);

// ----------------------------------------------------------------- benches

const operations: Operation[] = ["tools/call", "tools/list"];
for (const transport of ["stdio", "http"] satisfies TransportKind[]) {
  for (const operation of operations) {
    for (const target of targets) {
      if (target.transport !== transport) continue;
      const run = operation === "tools/call" ? target.call : target.list;
      Deno.bench({
        name: `${target.label} ${operation}`,
        group: `${transport} ${operation}`,
        baseline: target.kind === "peer",
        n: 2000,
        warmup: 200,
        fn: async () => {
          await run();
        },
      });
    }
  }
}
