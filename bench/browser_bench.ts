// agentd's browser-automation server against @playwright/mcp (pinned in
// deno.json) driving the same headless Chromium, in one run, as ratios.
//
// Setup, once at module load: one Chromium (CHROMIUM_PATH, else the one agentd
// would launch: findBrowser of platform/browser_discovery.ts) started
// headless with --remote-debugging-port on a free port and a temporary
// profile; one local page served by Deno.serve in this process (a heading, a
// paragraph #text, a button #btn whose text becomes "Clicked N" on each
// click, a link). Three MCP servers attach to that browser over CDP, each
// driven over stdio by one MCP SDK Client in this process:
//
//   agentd               `deno run -A main.ts mcp browser-automation
//                        --cdp-port P --data-dir <tmp>`; it adopts the
//                        browser's first tab (the only one when it starts)
//   playwright-mcp       `node node_modules/@playwright/mcp/cli.js
//                        --cdp-endpoint http://127.0.0.1:P --isolated
//                        --output-dir <tmp>`; --isolated gives it a browser
//                        context and tab of its own (without it, it takes
//                        over the default context's first tab: agentd's)
//   playwright-mcp, settle 0   the same with --timeout-settle 0 (default 500)
//
// Each side navigates its own URL (/?who=<side>); the bench checks through
// /json/list that every side has exactly one tab of its own. Calls are
// never concurrent: one at a time, the sides taking turns.
//
// What each side does per operation (every result is checked):
// agentd also reads the page's URL and title before and after every call
// (its action log), one CDP round trip each.
//   navigate   agentd `navigate {url}`: goto, waits for the load event,
//              returns {url, title, status, load_ms}.
//              playwright `browser_navigate {url}`: goto (domcontentloaded),
//              waits for load, takes an accessibility snapshot of the page
//              and writes it to a file in --output-dir (the reply links it).
//   get_text   agentd `get_text {selector: "#text"}`: finds the first match,
//              reads its innerText, counts the matches, returns it paged.
//              playwright has no get_text; its read tool is
//              `browser_snapshot {target: "#text"}`: the accessibility
//              snapshot of that element inline (role, ref and text). The
//              exact equivalent, `browser_evaluate {target: "#text",
//              function: "(el) => el.innerText"}`, is an action: it waits
//              the settle time (500 ms by default) after evaluating, so it
//              is reported as a separate row, not used in the sequence.
//   click      agentd `click_element {selector: "#btn"}`: waits for the
//              selector, clicks the centre, then waits a fixed 150 ms grace
//              for a navigation the click might start.
//              playwright `browser_click {target: "#btn"}` (this version
//              takes a selector as target, so no snapshot/ref round trip is
//              needed): clicks, waits the settle time (500 ms by default, 0
//              with --timeout-settle 0), then writes a page snapshot file.
//   sequence   navigate + get_text + click, as above (playwright: navigate
//              + browser_snapshot {target} + click).
//
// Printed besides the bench table (Deno.bench, baseline playwright-mcp with
// its defaults):
//   latency  p50/p90 per operation over BENCH_BROWSER_ROUNDS rounds (15).
//            In a round every side in turn (the first side rotating) runs
//            one sequence, each step timed (so get_text right after a
//            navigation), then the exact get_text on the clicked page
//            (playwright browser_evaluate, agentd get_text again); ratios
//            agentd ÷ playwright (below 1: agentd is faster)
//   memory   VmRSS/VmHWM of each server process (not Chromium) after
//            warm-up and after the run, agentd ÷ playwright-mcp
//
//   deno bench --allow-all bench/browser_bench.ts

import { join } from "node:path";
import { z } from "zod";
import {
  findBrowser,
  HEADLESS_CHROMIUM_ARGS,
} from "../platform/browser_discovery.ts";
import type { Client } from "../platform/mcp_sdk.ts";
import {
  freePort,
  packageVersion,
  READY_TIMEOUT_MS,
  stdioClient,
} from "./mcp_lib.ts";
import {
  agentdCommand,
  atCleanUp,
  cleanUp,
  descendantsOf,
  inTurn,
  killOnExit,
  ms,
  nodeVersion,
  percentile,
  printMemoryTable,
  ratio,
  ROOT,
  tempDir,
} from "./bench_lib.ts";

/** The browser executable; "" when there is none. */
const CHROMIUM = Deno.env.get("CHROMIUM_PATH") || findBrowser() || "";
const PEER_DIR = join(ROOT, "node_modules/@playwright/mcp/");
const PEER = join(PEER_DIR, "cli.js");
const ROUNDS = Number(Deno.env.get("BENCH_BROWSER_ROUNDS") ?? 15);
const WARMUP = 3;

type Side = "agentd" | "playwright" | "playwright-settle0";
type Operation = "navigate" | "get_text" | "click";
/** Rows of the latency table: the three operations, the sequence, the exact get_text. */
type Row = Operation | "sequence" | "evaluate";

interface Target {
  label: string;
  side: Side;
  pid: number;
  /** Spawn to initialized MCP session, one sample. */
  readyMs: number;
  op: Record<Operation, () => Promise<void>>;
  /** The button's text as this side reads it (to check that clicks land). */
  button: () => Promise<string>;
  /**
   * The exact get_text, run after each round's sequence: playwright
   * browser_evaluate innerText; agentd its get_text again (same position).
   */
  evaluate: () => Promise<void>;
}

// ------------------------------------------------------------------ page

const TEXT = "The quick brown fox jumps over the lazy dog.";
const TITLE = "Bench page";
const PAGE = `<!doctype html>
<html>
<head><meta charset="utf-8"><title>${TITLE}</title></head>
<body>
<h1>Browser bench</h1>
<p id="text">${TEXT}</p>
<button id="btn" onclick="this.textContent = 'Clicked ' + (++window.clicks)">Click me</button>
<p><a href="/other">Another page</a></p>
<script>window.clicks = 0;</script>
</body>
</html>
`;

// ---------------------------------------------------------------- checks

const Result = z.object({
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});
type Result = z.infer<typeof Result>;

/** One tools/call whose result must pass `check` (every call: no error fast paths). */
function checkedCall(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  check: (text: string, result: Result) => boolean,
): () => Promise<void> {
  return async () => {
    const raw = await client.callTool({ name, arguments: args });
    const parsed = Result.safeParse(raw);
    const text = parsed.success
      ? parsed.data.content.map((c) => c.text ?? "").join("\n")
      : "";
    if (
      !parsed.success || parsed.data.isError === true ||
      !check(text, parsed.data)
    ) {
      throw new Error(
        `${name}: unexpected result ${JSON.stringify(raw).slice(0, 600)}`,
      );
    }
  };
}

async function textOf(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const parsed = Result.parse(await client.callTool({ name, arguments: args }));
  return parsed.content.map((c) => c.text ?? "").join("\n");
}

// --------------------------------------------------------------- spawning

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
    if (performance.now() > deadline) {
      throw new Error(`Chromium: no CDP on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether a process is gone (or a zombie that only waits to be reaped). */
function gone(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/**
 * Chromium and every process it started, SIGKILLed at clean-up; waits up to
 * 2 s for them to go, so that its profile directory can be removed after.
 */
function killChromiumOnExit(pid: number): void {
  atCleanUp(() => {
    const pids = [pid, ...descendantsOf(pid)];
    for (const each of pids) {
      try {
        Deno.kill(each, "SIGKILL");
      } catch {
        // already gone
      }
    }
    const sleeper = new Int32Array(new SharedArrayBuffer(4));
    const deadline = performance.now() + 2000;
    while (!pids.every(gone) && performance.now() < deadline) {
      Atomics.wait(sleeper, 0, 0, 20);
    }
  });
}

async function agentdTarget(cdpPort: number, url: string): Promise<Target> {
  const started = performance.now();
  const cmd = agentdCommand([
    "mcp",
    "browser-automation",
    "--cdp-port",
    String(cdpPort),
    "--data-dir",
    tempDir("agentd-browserbench-"),
  ]);
  const { client, pid } = await stdioClient("agentd", cmd.command, cmd.args);
  killOnExit(pid);
  const structured = (result: Result) => result.structuredContent ?? {};
  const getText = checkedCall(
    client,
    "get_text",
    { selector: "#text" },
    (text) => text === TEXT,
  );
  return {
    label: "agentd",
    side: "agentd",
    pid,
    readyMs: performance.now() - started,
    op: {
      navigate: checkedCall(client, "navigate", { url }, (_, result) => {
        const s = structured(result);
        return s.title === TITLE && s.status === 200 && s.url === url;
      }),
      get_text: getText,
      click: checkedCall(
        client,
        "click_element",
        { selector: "#btn" },
        (_, result) => structured(result).navigated === false,
      ),
    },
    button: () => textOf(client, "get_text", { selector: "#btn" }),
    evaluate: getText,
  };
}

async function playwrightTarget(
  label: string,
  side: Side,
  cdpPort: number,
  url: string,
  extra: string[],
): Promise<Target> {
  const started = performance.now();
  const { client, pid } = await stdioClient(label, "node", [
    PEER,
    "--cdp-endpoint",
    `http://127.0.0.1:${cdpPort}`,
    "--isolated",
    "--output-dir",
    tempDir("agentd-browserbench-pw-"),
    ...extra,
  ]);
  killOnExit(pid);
  return {
    label,
    side,
    pid,
    readyMs: performance.now() - started,
    op: {
      navigate: checkedCall(
        client,
        "browser_navigate",
        { url },
        (text) =>
          text.includes(`- Page URL: ${url}\n`) &&
          text.includes(`- Page Title: ${TITLE}`) &&
          text.includes("### Snapshot"),
      ),
      get_text: checkedCall(
        client,
        "browser_snapshot",
        { target: "#text" },
        (text) => text.includes(`paragraph [ref=`) && text.includes(TEXT),
      ),
      click: checkedCall(
        client,
        "browser_click",
        { target: "#btn" },
        (text) =>
          text.includes("await page.locator('#btn').click();") &&
          text.includes("### Snapshot"),
      ),
    },
    button: () => textOf(client, "browser_snapshot", { target: "#btn" }),
    evaluate: checkedCall(
      client,
      "browser_evaluate",
      { target: "#text", function: "(el) => el.innerText" },
      (text) => text.includes(`### Result\n${JSON.stringify(TEXT)}`),
    ),
  };
}

/** Page targets in the browser, by URL (/json/list). */
async function pageUrls(cdpPort: number): Promise<string[]> {
  const response = await fetch(`http://127.0.0.1:${cdpPort}/json/list`);
  const targets = z.array(z.object({ type: z.string(), url: z.string() }))
    .parse(await response.json());
  return targets.filter((t) => t.type === "page").map((t) => t.url);
}

/** Every side has exactly one tab, showing its own URL. */
async function checkTabs(
  cdpPort: number,
  urls: Map<Target, string>,
): Promise<string> {
  const pages = await pageUrls(cdpPort);
  for (const [target, url] of urls) {
    const own = pages.filter((page) => page === url).length;
    if (own !== 1) {
      throw new Error(
        `${target.label}: ${own} tabs at ${url}, expected 1 (tabs: ${
          pages.join(", ")
        })`,
      );
    }
  }
  return `${pages.length} tabs, one per side: ${pages.join(", ")}`;
}

// ------------------------------------------------------------- measuring

type Samples = Map<Target, Map<Row, number[]>>;

async function timed(run: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** One sequence per side and round, the first side rotating; each step timed. */
async function interleaved(
  targets: Target[],
  rounds: number,
): Promise<Samples> {
  const samples: Samples = new Map(
    targets.map((t) => [t, new Map<Row, number[]>()]),
  );
  const push = (target: Target, row: Row, value: number) => {
    const rows = samples.get(target);
    if (!rows) return;
    rows.set(row, [...(rows.get(row) ?? []), value]);
  };
  for (const target of inTurn(targets, rounds)) {
    let total = 0;
    for (const operation of ["navigate", "get_text", "click"] as const) {
      const took = await timed(target.op[operation]);
      push(target, operation, took);
      total += took;
    }
    push(target, "sequence", total);
    push(target, "evaluate", await timed(target.evaluate));
  }
  return samples;
}

const ROW_LABEL: Record<Row, string> = {
  navigate: "navigate ↔ browser_navigate",
  get_text: "get_text ↔ browser_snapshot {target}",
  evaluate: "get_text ↔ browser_evaluate innerText",
  click: "click_element ↔ browser_click {target}",
  sequence: "navigate + get_text + click",
};

function printLatency(targets: Target[], samples: Samples): void {
  const bySide = (side: Side) => targets.find((t) => t.side === side);
  const p = (side: Side, row: Row, at: number) => {
    const target = bySide(side);
    const values = target ? samples.get(target)?.get(row) ?? [] : [];
    return percentile(values, at);
  };
  const rows: Row[] = ["navigate", "get_text", "evaluate", "click", "sequence"];
  console.log(
    `\nLatency per call, ${ROUNDS} rounds, sides taking turns (ms; ratios of ` +
      `p50, agentd ÷ playwright: below 1 means agentd is faster)`,
  );
  console.table(rows.map((row) => {
    const agentd = p("agentd", row, 50);
    const pw = p("playwright", row, 50);
    const pw0 = p("playwright-settle0", row, 50);
    return {
      operation: ROW_LABEL[row],
      "agentd p50": ms(agentd),
      "agentd p90": ms(p("agentd", row, 90)),
      "pw p50": ms(pw),
      "pw p90": ms(p("playwright", row, 90)),
      "pw settle0 p50": ms(pw0),
      "agentd ÷ pw": ratio(agentd, pw),
      "agentd ÷ pw settle0": ratio(agentd, pw0),
    };
  }));
}

function printMemory(title: string, targets: Target[], first: boolean): void {
  const peer = targets.find((t) => t.side === "playwright");
  printMemoryTable(title, targets, {
    nameColumn: "server",
    versus: "agentd ÷ pw",
    against: (target) => target.side === "agentd" ? peer : undefined,
    first,
    more: (target) => ({
      "child processes": String(descendantsOf(target.pid).length),
    }),
  });
}

// ------------------------------------------------------------------ setup

const targets: Target[] = [];
const urls = new Map<Target, string>();
let cdpPort = 0;
let tabs = "";

try {
  try {
    Deno.statSync(CHROMIUM);
  } catch {
    throw new Error(
      `No Chromium ${
        CHROMIUM ? `at ${CHROMIUM}` : "found"
      }: apt-get install chromium, or set CHROMIUM_PATH`,
    );
  }
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) =>
      new URL(request.url).pathname === "/favicon.ico"
        ? new Response(null, { status: 404 })
        : new Response(PAGE, {
          headers: { "content-type": "text/html; charset=utf-8" },
        }),
  );
  server.unref();
  const base = `http://127.0.0.1:${server.addr.port}/`;

  cdpPort = freePort();
  const profile = tempDir("agentd-browserbench-chromium-");
  const chromium = new Deno.Command(CHROMIUM, {
    args: [
      ...HEADLESS_CHROMIUM_ARGS,
      `--remote-debugging-port=${cdpPort}`,
      `--user-data-dir=${profile}`,
      "about:blank",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  killChromiumOnExit(chromium.pid);
  await untilCdp(cdpPort);

  // agentd first: it adopts the browser's only tab before the others open theirs.
  const agentd = await agentdTarget(cdpPort, `${base}?who=agentd`);
  await agentd.op.navigate();
  targets.push(agentd);
  for (
    const [label, side, extra] of [
      ["playwright-mcp", "playwright", []],
      ["playwright-mcp, settle 0", "playwright-settle0", [
        "--timeout-settle",
        "0",
      ]],
    ] satisfies [string, Side, string[]][]
  ) {
    const target = await playwrightTarget(
      label,
      side,
      cdpPort,
      `${base}?who=${side}`,
      extra,
    );
    await target.op.navigate();
    targets.push(target);
  }
  for (const target of targets) {
    urls.set(target, `${base}?who=${target.side}`);
  }

  // The clicks land: each side's button counts its own clicks.
  for (const target of targets) {
    await target.op.click();
    const button = await target.button();
    if (!button.includes("Clicked 1")) {
      throw new Error(`${target.label}: click did not land: ${button}`);
    }
  }
  for (let i = 0; i < WARMUP; i++) {
    for (const target of targets) {
      for (const operation of ["navigate", "get_text", "click"] as const) {
        await target.op[operation]();
      }
      await target.evaluate();
    }
  }
  tabs = await checkTabs(cdpPort, urls);
} catch (error) {
  cleanUp();
  throw error;
}
// Runs first at clean-up (at unload), while the servers are still up.
atCleanUp(() =>
  printMemory("Memory after the benchmarks (VmRSS, VmHWM)", targets, false)
);

const chromiumVersion = new TextDecoder().decode(
  new Deno.Command(CHROMIUM, { args: ["--version"], stderr: "null" })
    .outputSync().stdout,
).trim();
console.log(
  `agentd browser-automation (Deno ${Deno.version.deno}) vs @playwright/mcp ${
    packageVersion(PEER_DIR)
  } (Node ${nodeVersion()}); ${chromiumVersion}, headless, CDP port ${cdpPort}; ` +
    `client: one MCP SDK Client per server in this process`,
);
console.log(`Tabs after warm-up: ${tabs}`);
printMemory(
  `Memory after ${WARMUP} warm-up sequences (VmRSS, VmHWM)`,
  targets,
  true,
);
try {
  printLatency(targets, await interleaved(targets, ROUNDS));
  console.log(`Tabs after the rounds: ${await checkTabs(cdpPort, urls)}`);
} catch (error) {
  cleanUp();
  throw error;
}

// ----------------------------------------------------------------- benches

const GROUPS: {
  group: string;
  n: number;
  run: (target: Target) => () => Promise<void>;
  name: (target: Target) => string;
}[] = [
  {
    group: "navigate",
    n: 20,
    run: (t) => t.op.navigate,
    name: (t) =>
      t.side === "agentd" ? "agentd navigate" : `${t.label} browser_navigate`,
  },
  {
    group: "get_text",
    n: 30,
    run: (t) => t.op.get_text,
    name: (t) =>
      t.side === "agentd"
        ? "agentd get_text"
        : `${t.label} browser_snapshot {target}`,
  },
  {
    group: "get_text, exact (browser_evaluate innerText)",
    n: 15,
    run: (t) => t.evaluate,
    name: (t) =>
      t.side === "agentd" ? "agentd get_text" : `${t.label} browser_evaluate`,
  },
  {
    group: "click",
    n: 15,
    run: (t) => t.op.click,
    name: (t) =>
      t.side === "agentd" ? "agentd click_element" : `${t.label} browser_click`,
  },
  {
    group: "navigate + get_text + click",
    n: 10,
    run: (t) => async () => {
      await t.op.navigate();
      await t.op.get_text();
      await t.op.click();
    },
    name: (t) => t.label,
  },
];

for (const { group, n, run, name } of GROUPS) {
  for (const target of targets) {
    const fn = run(target);
    Deno.bench({
      name: name(target),
      group,
      baseline: target.side === "playwright",
      n,
      warmup: 2,
      fn: async () => {
        await fn();
      },
    });
  }
}
