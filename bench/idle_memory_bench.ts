// Idle memory of `agentd serve` (every server, no browser started) against a
// bare Hono app on Deno (Deno.serve + one route), started in turn: VmRSS 3 s
// after each process first logs that it listens, and again once V8's memory
// reducer has run (its first shrinking GC comes 30–40 s after start). agentd
// runs with the V8 flags of `deno task start` and, for comparison, Deno's
// defaults, without the V8 code cache, one server alone (`--servers
// memory`) and no server at all: the floor that loading every server on
// first use could approach.
//
//   deno run -A bench/idle_memory_bench.ts
//     BENCH_IDLE_RUNS (default 3), BENCH_IDLE_LATE_S (default 45; 0 skips the late reading)

import { join } from "node:path";
import { cleanUp, DENO, inTurn, ROOT, tempDir } from "./bench_lib.ts";

const RUNS = Number(Deno.env.get("BENCH_IDLE_RUNS") ?? 3);
const SETTLE_MS = 3000;
const LATE_MS = Number(Deno.env.get("BENCH_IDLE_LATE_S") ?? 45) * 1000;

const BARE_APP = `
import { Hono } from "hono";
const app = new Hono();
app.get("/v1/agents", (c) => c.json({ data: [] }));
Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) =>
    console.error(JSON.stringify({ event: "listening", port })),
}, app.fetch);
`;

// `agentd serve` with no server at all: main() over an empty catalog (as
// tests pass their own servers), so the routes, the agent runtime and the
// SDK load as in the daemon but no server module does.
const NO_SERVER = `
import { main } from ${JSON.stringify(join(ROOT, "main.ts"))};
Deno.exit(await main(Deno.args, { specs: [] }));
`;

interface Variant {
  label: string;
  args: () => string[];
  samples: number[];
  late: number[];
}

function serveArgs(
  v8: string[],
  extra: string[] = [],
  options: { runFlags?: string[]; entry?: string } = {},
): () => string[] {
  return () => {
    const dir = tempDir("agentd-idle-");
    return [
      "run",
      "-A",
      ...(options.runFlags ?? []),
      ...v8.map((flag) => `--v8-flags=${flag}`),
      ...(options.entry ? ["--config", join(ROOT, "deno.json")] : []),
      options.entry ?? join(ROOT, "main.ts"),
      "serve",
      "--port",
      "0",
      "--data-dir",
      dir,
      ...extra,
    ];
  };
}

const scratch = tempDir("agentd-idle-apps-");
const bareFile = join(scratch, "bare.ts");
Deno.writeTextFileSync(bareFile, BARE_APP);
const noServerFile = join(scratch, "no_server.ts");
Deno.writeTextFileSync(noServerFile, NO_SERVER);

const variants: Variant[] = [
  {
    label: "agentd serve, --max-semi-space-size=1 (deno task start)",
    args: serveArgs(["--max-semi-space-size=1"]),
  },
  { label: "agentd serve, Deno's defaults", args: serveArgs([]) },
  {
    // The V8 code cache's buffers and its open SQLite file, against a slower start.
    label: "agentd serve, --max-semi-space-size=1, deno run --no-code-cache",
    args: serveArgs(["--max-semi-space-size=1"], [], {
      runFlags: ["--no-code-cache"],
    }),
  },
  {
    // Every config section is validated; only the memory server loads.
    label: "agentd serve --servers memory, --max-semi-space-size=1",
    args: serveArgs(["--max-semi-space-size=1"], ["--servers", "memory"]),
  },
  {
    // What loading every server on first use could reach at most.
    label: "agentd serve, no server at all, --max-semi-space-size=1",
    args: serveArgs(["--max-semi-space-size=1"], [], { entry: noServerFile }),
  },
  {
    label: "bare Hono on Deno",
    args: () => ["run", "-A", "--config", join(ROOT, "deno.json"), bareFile],
  },
].map((variant) => ({ ...variant, samples: [], late: [] }));

/** VmRSS in MiB of the process `args` starts, SETTLE_MS and LATE_MS after it listens. */
async function idleRss(args: string[]): Promise<[number, number]> {
  const child = new Deno.Command(DENO, {
    args,
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    // No display: desktop-control reports it cannot work, as on a server.
    env: { ...Deno.env.toObject(), DISPLAY: "" },
  }).spawn();
  try {
    const reader = child.stderr.pipeThrough(new TextDecoderStream())
      .getReader();
    let seen = "";
    while (!seen.includes('"listening"')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`exited before listening: ${seen.slice(-500)}`);
      seen = (seen + value).slice(-4000);
    }
    // Keep stderr drained so the child never blocks on a full pipe.
    (async () => {
      while (!(await reader.read()).done) { /* drain */ }
    })().catch(() => {});
    const listening = performance.now();
    const rssAt = async (ms: number) => {
      const wait = ms - (performance.now() - listening);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
    };
    const settled = await rssAt(SETTLE_MS);
    return [settled, LATE_MS > 0 ? await rssAt(LATE_MS) : NaN];
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

try {
  for (const variant of inTurn(variants, RUNS)) {
    const [settled, late] = await idleRss(variant.args());
    variant.samples.push(settled);
    variant.late.push(late);
  }
} finally {
  cleanUp();
}

const bare = variants[variants.length - 1];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const range = (xs: number[]) =>
  `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
console.log(
  `\nidle VmRSS ${SETTLE_MS / 1000} s and ${
    LATE_MS / 1000
  } s after listening, ${RUNS} runs`,
);
console.table(variants.map((v) => ({
  process: v.label,
  [`MiB at ${SETTLE_MS / 1000} s`]: range(v.samples),
  "÷ bare (median)": (median(v.samples) / median(bare.samples)).toFixed(2),
  ...(LATE_MS > 0
    ? {
      [`MiB at ${LATE_MS / 1000} s`]: range(v.late),
      "÷ bare, late": (median(v.late) / median(bare.late)).toFixed(2),
    }
    : {}),
})));
