// agentd's desktop-control screenshot and input tools against ImageMagick
// `import -window root`, `xwd | convert` and `xdotool`, on one Xvfb in one
// run, reported as ratios.
//
// Setup: Xvfb at 1920x1080x24 on a free display (-displayfd), an xterm and an
// xlogo on it so the screen is not blank; two desktop-control servers
// in-process, each driven by an MCP SDK client over an in-memory link (a
// real tools/call: validation, lock, action log, base64 image content):
//   agentd          defaults: scaled to a 1280 long side, JPEG q80 via
//                   libturbojpeg when installed (else jpeg-js), PNG via fast-png
//   agentd full     max_long_side 4096: the full 1920x1080, like the peers
// Peers, each a process per capture, output to a temp file:
//   import          `import -window root [-crop WxH+X+Y] out.jpg|png`
//   xwd | convert   `sh -c "xwd -root -silent | convert xwd:- [-crop] out.jpg"`
// Input: agentd `mouse_move {coordinates: "screen"}` (XTest motion, then
// XSync: the X server has processed it when the call returns) against
// `xdotool mousemove X Y` (connect, XTest, sync, exit).
//
// Rounds: BENCH_DESKTOP_ROUNDS (default 15); in each round every side runs
// each operation once, sides interleaved so load hits all alike. Printed:
// p50 per side and operation, and each peer's p50 ÷ agentd's (above 1:
// agentd is faster).
//
// Run: deno run -A bench/desktop_bench.ts   (needs xvfb, imagemagick,
// x11-apps, xterm, xdotool; the numbers in tools/desktop-control/README.md).

import { Client } from "../platform/mcp_sdk.ts";
import { createLogger } from "../platform/log.ts";
import { MemoryStore } from "../platform/store/memory.ts";
import { desktopControlServer } from "../tools/desktop-control/mod.ts";
import { HostedServer } from "../tools/kit/host.ts";
import { connectInProcess } from "../tools/kit/transport/sdk_server.ts";
import { firstLine } from "./bench_lib.ts";

const ROUNDS = Number(Deno.env.get("BENCH_DESKTOP_ROUNDS") ?? 15);
const REGION = { x: 100, y: 100, width: 640, height: 480 };
const CROP = `${REGION.width}x${REGION.height}+${REGION.x}+${REGION.y}`;

async function startXvfb(): Promise<
  { display: string; process: Deno.ChildProcess }
> {
  const process = new Deno.Command("Xvfb", {
    args: [
      "-displayfd",
      "1",
      "-nolisten",
      "tcp",
      "-screen",
      "0",
      "1920x1080x24",
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const display = await firstLine(process.stdout, "Xvfb (its display)");
  return { display: `:${display.trim()}`, process };
}

const x = await startXvfb();
const env = { DISPLAY: x.display, PATH: "/usr/bin:/bin" };
const clients = [
  new Deno.Command("xterm", { args: ["-geometry", "120x40+50+50"], env })
    .spawn(),
  new Deno.Command("xlogo", { args: ["-geometry", "400x400+1200+300"], env })
    .spawn(),
];
const dir = await Deno.makeTempDir({ prefix: "agentd-desktop-bench-" });

async function server(
  config: Record<string, unknown>,
): Promise<{ host: HostedServer; client: Client }> {
  const host = await HostedServer.start(desktopControlServer, {
    store: new MemoryStore(),
    log: createLogger({ level: "error" }),
    config,
    dataDir: dir,
    env,
  });
  if (host.phase.phase !== "running") throw new Error(host.phase.state.error);
  const client = new Client({ name: "desktop-bench", version: "1.0.0" });
  await client.connect(await connectInProcess(host, {}));
  return { host, client };
}

const agentd = await server({});
const full = await server({ max_long_side: 4096 });

async function tool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<void> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) {
    throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  }
}

async function run(command: string, args: string[]): Promise<void> {
  const output = await new Deno.Command(command, {
    args,
    env,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`${command}: ${new TextDecoder().decode(output.stderr)}`);
  }
}

type Op = () => Promise<void>;
const shot =
  (client: Client, format: string, region?: typeof REGION): Op => () =>
    tool(client, "screenshot", region ? { format, region } : { format });
const imp = (ext: string, crop: boolean): Op => () =>
  run("import", [
    "-window",
    "root",
    ...(crop ? ["-crop", CROP] : []),
    `${dir}/i.${ext}`,
  ]);
const xwd = (ext: string, crop: boolean): Op => () =>
  run("sh", [
    "-c",
    `xwd -root -silent | convert xwd:- ${
      crop ? `-crop ${CROP}` : ""
    } ${dir}/x.${ext}`,
  ]);
let flip = 0;
const move = (): Op => () =>
  tool(agentd.client, "mouse_move", {
    x: 300 + (flip ^= 1),
    y: 300,
    coordinates: "screen",
  });
const xdotool = (): Op => () =>
  run("xdotool", ["mousemove", String(400 + (flip ^= 1)), "400"]);

const OPERATIONS: { name: string; sides: Record<string, Op> }[] = [
  {
    name: "full screen JPEG",
    sides: {
      agentd: shot(agentd.client, "jpeg"),
      "agentd full": shot(full.client, "jpeg"),
      import: imp("jpg", false),
      "xwd | convert": xwd("jpg", false),
    },
  },
  {
    name: "full screen PNG",
    sides: {
      agentd: shot(agentd.client, "png"),
      "agentd full": shot(full.client, "png"),
      import: imp("png", false),
      "xwd | convert": xwd("png", false),
    },
  },
  {
    name: "region 640x480 JPEG",
    sides: {
      agentd: shot(agentd.client, "jpeg", REGION),
      import: imp("jpg", true),
      "xwd | convert": xwd("jpg", true),
    },
  },
  {
    name: "region 640x480 PNG",
    sides: {
      agentd: shot(agentd.client, "png", REGION),
      import: imp("png", true),
      "xwd | convert": xwd("png", true),
    },
  },
  {
    name: "input event (pointer move)",
    sides: { agentd: move(), xdotool: xdotool() },
  },
];

async function cleanup(): Promise<void> {
  await agentd.client.close();
  await full.client.close();
  await agentd.host.stop(1000);
  await full.host.stop(1000);
  for (const child of [...clients, x.process]) {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await child.status;
  }
  await Deno.remove(dir, { recursive: true });
}

function p50(values: number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

if (import.meta.main) {
  const times = new Map<string, number[]>();
  for (const op of OPERATIONS) {
    for (const side of Object.keys(op.sides)) {
      times.set(`${op.name}|${side}`, []);
    }
  }
  for (const op of OPERATIONS) {
    for (const fn of Object.values(op.sides)) await fn(); // warm up
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const op of OPERATIONS) {
      const sides = Object.entries(op.sides);
      const start = round % sides.length;
      for (let i = 0; i < sides.length; i++) {
        const [side, fn] = sides[(start + i) % sides.length];
        const began = performance.now();
        await fn();
        times.get(`${op.name}|${side}`)?.push(performance.now() - began);
      }
    }
  }
  console.log(
    `desktop bench: Xvfb 1920x1080, ${ROUNDS} rounds, p50 in ms; ratio = peer ÷ agentd (above 1: agentd faster)`,
  );
  for (const op of OPERATIONS) {
    const base = p50(times.get(`${op.name}|agentd`) ?? []);
    const cells = Object.keys(op.sides).map((side) => {
      const value = p50(times.get(`${op.name}|${side}`) ?? []);
      return side === "agentd"
        ? `agentd ${value.toFixed(1)}`
        : `${side} ${value.toFixed(1)} (${(value / base).toFixed(1)}×)`;
    });
    console.log(`${op.name.padEnd(28)} ${cells.join("  ")}`);
  }
  await cleanup();
} else {
  for (const op of OPERATIONS) {
    for (const [side, fn] of Object.entries(op.sides)) {
      Deno.bench({
        name: `${op.name}: ${side}`,
        group: op.name,
        baseline: side === "agentd",
        fn,
      });
    }
  }
  globalThis.addEventListener("unload", () => {
    for (const child of [...clients, x.process]) {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
    }
  });
}
