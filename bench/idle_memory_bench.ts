// Idle memory of `agentd serve` (every server, no browser started) against a
// bare Hono app on Deno (Deno.serve + one route), started in turn: VmRSS 3 s
// after each process first logs that it listens. agentd runs with the V8
// flags of `deno task start` and, for comparison, other V8 flag sets and one
// server alone (`--servers memory`).
//
//   deno run -A bench/idle_memory_bench.ts     (BENCH_IDLE_RUNS, default 3)

import { join } from "node:path";
import { cleanUp, DENO, inTurn, ROOT, tempDir } from "./bench_lib.ts";

const RUNS = Number(Deno.env.get("BENCH_IDLE_RUNS") ?? 3);
const SETTLE_MS = 3000;

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

interface Variant {
  label: string;
  args: () => string[];
  samples: number[];
}

function serveArgs(v8: string[], extra: string[] = []): () => string[] {
  return () => {
    const dir = tempDir("agentd-idle-");
    return [
      "run",
      "-A",
      ...v8.map((flag) => `--v8-flags=${flag}`),
      join(ROOT, "main.ts"),
      "serve",
      "--port",
      "0",
      "--data-dir",
      dir,
      ...extra,
    ];
  };
}

const bareFile = join(tempDir("agentd-idle-bare-"), "bare.ts");
Deno.writeTextFileSync(bareFile, BARE_APP);

const variants: Variant[] = [
  {
    label: "agentd serve, --max-semi-space-size=1 (deno task start)",
    args: serveArgs(["--max-semi-space-size=1"]),
    samples: [],
  },
  {
    label: "agentd serve, --max-semi-space-size=1,--lite-mode",
    args: serveArgs(["--max-semi-space-size=1,--lite-mode"]),
    samples: [],
  },
  { label: "agentd serve, Deno's defaults", args: serveArgs([]), samples: [] },
  {
    // Every config section is validated; only the memory server loads.
    label: "agentd serve --servers memory, --max-semi-space-size=1",
    args: serveArgs(["--max-semi-space-size=1"], ["--servers", "memory"]),
    samples: [],
  },
  {
    // What loading the five servers on first use could save at most.
    label: "agentd serve --servers gateway,memory, --max-semi-space-size=1",
    args: serveArgs(["--max-semi-space-size=1"], [
      "--servers",
      "gateway,memory",
    ]),
    samples: [],
  },
  {
    label: "bare Hono on Deno",
    args: () => ["run", "-A", "--config", join(ROOT, "deno.json"), bareFile],
    samples: [],
  },
];

/** VmRSS in MiB of the process `args` starts, SETTLE_MS after it listens. */
async function idleRss(args: string[]): Promise<number> {
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
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    return kb / 1024;
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

try {
  for (const variant of inTurn(variants, RUNS)) {
    variant.samples.push(await idleRss(variant.args()));
  }
} finally {
  cleanUp();
}

const bare = variants[variants.length - 1];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`\nidle VmRSS ${SETTLE_MS / 1000} s after listening, ${RUNS} runs`);
console.table(variants.map((v) => ({
  process: v.label,
  "MiB min–max": `${Math.min(...v.samples).toFixed(0)}–${
    Math.max(...v.samples).toFixed(0)
  }`,
  "÷ bare (median)": (median(v.samples) / median(bare.samples)).toFixed(2),
})));
