// Context economy (issue 23), in one run:
//
// 1. Tool definitions per model turn. One `agentd serve` (every built-in
//    server, default config) on a free port; two MCP SDK clients of its /mcp:
//    one asking for every tool (capability io.agentd/tools {mode: "all"}),
//    one for tools on demand ({mode: "on_demand"}). Bytes are the tools as a
//    model API receives them (OpenAI `tools`: {type, function: {name,
//    description, parameters}}, JSON), i.e. what an agent pays every turn.
//
// 2. Page snapshots. One headless Chromium (CHROMIUM_PATH, else findBrowser)
//    with CDP on a free port; the page of tests/tools/browser-automation/
//    snapshot_site.ts (more than 500 KB of DOM) served by Deno.serve here.
//    agentd `mcp browser-automation --cdp-port P` and @playwright/mcp
//    `--cdp-endpoint … --isolated` over stdio each navigate to it in a tab
//    of their own, then take turns for BENCH_SNAPSHOT_ROUNDS rounds (5):
//    agentd `snapshot {}` (default max_tokens 4000) and playwright
//    `browser_snapshot {}` (the whole page). Printed: bytes of the answer's
//    text, p50 latency, ratios agentd ÷ playwright.

import { join } from "node:path";
import {
  findBrowser,
  HEADLESS_CHROMIUM_ARGS,
} from "../platform/browser_discovery.ts";
import {
  Client,
  StreamableHTTPClientTransport,
  type Tool,
} from "../platform/mcp_sdk.ts";
import { bigPage } from "../tests/tools/browser-automation/snapshot_site.ts";
import {
  agentdCommand,
  atCleanUp,
  cleanUp,
  descendantsOf,
  killOnExit,
  percentile,
  ROOT,
  tempDir,
} from "./bench_lib.ts";
import {
  agentdPort,
  freePort,
  portFromOutput,
  READY_TIMEOUT_MS,
  stdioClient,
} from "./mcp_lib.ts";

const ROUNDS = Number(Deno.env.get("BENCH_SNAPSHOT_ROUNDS") ?? 5);
const CHROMIUM = Deno.env.get("CHROMIUM_PATH") || findBrowser() || "";
const PEER = join(ROOT, "node_modules/@playwright/mcp/cli.js");

/** The tools as a model API receives them each turn. */
function modelBytes(tools: Tool[]): number {
  return JSON.stringify(tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      description: tool.description ?? "",
      parameters: tool.inputSchema,
    },
  }))).length;
}

async function httpClient(url: string, mode: string): Promise<Client> {
  const client = new Client({ name: "context-bench", version: "1.0.0" }, {
    capabilities: { experimental: { "io.agentd/tools": { mode } } },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

function killTreeOnExit(pid: number): void {
  atCleanUp(() => {
    for (const each of [pid, ...descendantsOf(pid)]) {
      try {
        Deno.kill(each, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
}

async function toolDefinitions(): Promise<void> {
  const cmd = agentdCommand([
    "serve",
    "--port",
    "0",
    "--data-dir",
    tempDir("agentd-contextbench-"),
  ]);
  const child = new Deno.Command(cmd.command, {
    args: cmd.args,
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  killTreeOnExit(child.pid);
  const port = await portFromOutput("agentd serve", child.stderr, agentdPort);
  const url = `http://127.0.0.1:${port}/mcp`;
  const all = await httpClient(url, "all");
  const lean = await httpClient(url, "on_demand");
  const every = (await all.listTools()).tools;
  const few = (await lean.listTools()).tools;
  const servers = new Set(
    every.map((tool) =>
      tool.name.split("__")[1] ? tool.name.split("__")[0] : "gateway"
    ),
  );
  console.log(
    `\nTool definitions sent to the model per turn, agentd serve with ${servers.size} servers listing tools (${
      [...servers].sort().join(", ")
    })`,
  );
  console.table([
    { mode: "all (default)", tools: every.length, bytes: modelBytes(every) },
    { mode: "on_demand", tools: few.length, bytes: modelBytes(few) },
  ]);
  console.log(
    `on_demand sends ${
      (modelBytes(every) / modelBytes(few)).toFixed(1)
    }× fewer bytes`,
  );
  await all.close();
  await lean.close();
}

async function untilCdp(port: number): Promise<void> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  while (true) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/json/version`);
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error("Chromium: no CDP");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function textOf(result: unknown): string {
  const content = Reflect.get(Object(result), "content");
  if (!Array.isArray(content)) return "";
  return content.map((block) =>
    String(Reflect.get(Object(block), "text") ?? "")
  )
    .join("\n");
}

async function snapshots(): Promise<void> {
  if (!CHROMIUM) throw new Error("No Chromium: set CHROMIUM_PATH");
  const page = bigPage();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) =>
      new URL(request.url).pathname === "/frame"
        ? new Response("<button>Inside frame</button>", {
          headers: { "content-type": "text/html" },
        })
        : new Response(page, { headers: { "content-type": "text/html" } }),
  );
  server.unref();
  const base = `http://127.0.0.1:${server.addr.port}/big`;
  const cdpPort = freePort();
  const chromium = new Deno.Command(CHROMIUM, {
    args: [
      ...HEADLESS_CHROMIUM_ARGS,
      `--remote-debugging-port=${cdpPort}`,
      `--user-data-dir=${tempDir("agentd-contextbench-chromium-")}`,
      "about:blank",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  killTreeOnExit(chromium.pid);
  await untilCdp(cdpPort);

  const cmd = agentdCommand([
    "mcp",
    "browser-automation",
    "--cdp-port",
    String(cdpPort),
    "--data-dir",
    tempDir("agentd-contextbench-"),
  ]);
  const agentd = await stdioClient("agentd", cmd.command, cmd.args);
  killOnExit(agentd.pid);
  const playwright = await stdioClient("playwright-mcp", "node", [
    PEER,
    "--cdp-endpoint",
    `http://127.0.0.1:${cdpPort}`,
    "--isolated",
    "--output-dir",
    tempDir("agentd-contextbench-pw-"),
  ]);
  killOnExit(playwright.pid);
  await agentd.client.callTool({
    name: "navigate",
    arguments: { url: `${base}?who=agentd` },
  });
  await playwright.client.callTool({
    name: "browser_navigate",
    arguments: { url: `${base}?who=playwright` },
  });
  const sides = [
    {
      label: "agentd snapshot {} (max_tokens 4000)",
      run: () => agentd.client.callTool({ name: "snapshot", arguments: {} }),
    },
    {
      label: "playwright-mcp browser_snapshot {}",
      run: () =>
        playwright.client.callTool({ name: "browser_snapshot", arguments: {} }),
    },
  ];
  const samples = sides.map(() => ({ ms: [] as number[], bytes: 0 }));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, side] of sides.entries()) {
      const started = performance.now();
      const result = await side.run();
      samples[index].ms.push(performance.now() - started);
      if (Reflect.get(Object(result), "isError") === true) {
        throw new Error(`${side.label}: ${textOf(result).slice(0, 500)}`);
      }
      samples[index].bytes = new TextEncoder().encode(textOf(result)).length;
    }
  }
  console.log(
    `\nSnapshot of a page of ${page.length} bytes of HTML, ${ROUNDS} rounds, sides taking turns`,
  );
  console.table(sides.map((side, index) => ({
    side: side.label,
    "bytes returned": samples[index].bytes,
    "≈ tokens": Math.ceil(samples[index].bytes / 4),
    "p50 ms": Math.round(percentile(samples[index].ms, 50)),
  })));
  console.log(
    `agentd ÷ playwright: bytes ${
      (samples[0].bytes / samples[1].bytes).toFixed(3)
    }, p50 latency ${
      (percentile(samples[0].ms, 50) / percentile(samples[1].ms, 50)).toFixed(2)
    }`,
  );
  await agentd.client.close();
  await playwright.client.close();
}

try {
  await toolDefinitions();
  await snapshots();
} finally {
  cleanUp();
}

// A bench entry so `deno bench` runs this file; the figures are printed above.
Deno.bench({
  name: "context bench (figures printed above)",
  n: 1,
  fn() {},
});
