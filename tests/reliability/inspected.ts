// `agentd serve` (test fixture CLI) run as `deno task start` runs it, plus
// the V8 inspector on a loopback port, so the load soak can read the JS heap
// after a full GC: the leak signal the RSS (allocator and heap sizing noise)
// cannot give.

import { type Daemon, freePort, spawnServe } from "../helpers.ts";

/** What `deno task start` passes to V8 (deno.json); the soak measures that daemon. */
export const START_V8_FLAGS = "--max-semi-space-size=1";

/** What Deno prints on stderr for the inspector: not ours, not a stray line. */
const INSPECTOR_NOISE =
  /^(Debugger listening on |Visit chrome:\/\/inspect|Debugger session (started|ended))/;

export interface InspectedDaemon extends Daemon {
  /** Bytes of JS heap in use after a forced full GC (V8 inspector). */
  heapAfterGc(): Promise<number>;
  /** The daemon's memory figures after a forced full GC: `Deno.memoryUsage()` and glibc's `mallinfo2()`. */
  memoryAfterGc(): Promise<Record<string, number>>;
  /** Writes a V8 heap snapshot (taken after a full GC) to `path`, for `heap_summary.ts`. */
  heapSnapshot(path: string): Promise<void>;
}

interface Reply {
  id: number;
  result?: Record<string, unknown>;
  error?: { message?: string };
}

/** An event the inspector sends unasked (e.g. a heap snapshot's chunks). */
interface Notice {
  method: string;
  params?: Record<string, unknown>;
}

type Call = (
  method: string,
  params?: Record<string, unknown>,
) => Promise<Reply>;

function isReply(value: unknown): value is Reply {
  return typeof value === "object" && value !== null && "id" in value &&
    typeof value.id === "number";
}

function isNotice(value: unknown): value is Notice {
  return typeof value === "object" && value !== null && "method" in value &&
    typeof value.method === "string";
}

async function collect(call: Call): Promise<void> {
  const collected = await call("HeapProfiler.collectGarbage");
  if (collected.error) throw new Error(collected.error.message);
}

/** One CDP connection; each call opens its own, so nothing lingers between samples. */
async function inspect<T>(
  port: number,
  use: (call: Call) => Promise<T>,
  onNotice: (notice: Notice) => void = () => {},
): Promise<T> {
  const targets: unknown = await (await fetch(
    `http://127.0.0.1:${port}/json/list`,
  )).json();
  const target = Array.isArray(targets) ? Object(targets[0]) : {};
  if (typeof target.webSocketDebuggerUrl !== "string") {
    throw new Error(`no inspector target: ${JSON.stringify(targets)}`);
  }
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  const waiting = new Map<number, (reply: Reply) => void>();
  const closed = Promise.withResolvers<void>();
  socket.onclose = () => closed.resolve();
  socket.onmessage = (event) => {
    const message: unknown = JSON.parse(String(event.data));
    if (isReply(message)) waiting.get(message.id)?.(message);
    else if (isNotice(message)) onNotice(message);
  };
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("inspector connection failed"));
  });
  let next = 0;
  const call: Call = (method, params = {}) =>
    new Promise<Reply>((resolve) => {
      waiting.set(++next, resolve);
      socket.send(JSON.stringify({ id: next, method, params }));
    });
  try {
    return await use(call);
  } finally {
    socket.close();
    await closed.promise;
  }
}

/**
 * Evaluated in the daemon (Linux, glibc 2.33+): `Deno.memoryUsage()` plus, from glibc's
 * `mallinfo2()` (all arenas), the heap it holds from the system (`arena`,
 * `mmapped`) and how much of that is in use or free.
 */
const MEMORY_FIGURES = `(() => {
  const libc = globalThis.__agentdProbeLibc ??= Deno.dlopen("libc.so.6", {
    mallinfo2: { parameters: [], result: { struct: Array(10).fill("usize") } },
  });
  const info = new BigUint64Array(libc.symbols.mallinfo2().buffer);
  return JSON.stringify({
    ...Deno.memoryUsage(),
    mallocArena: Number(info[0]),
    mallocMmapped: Number(info[4]),
    mallocUsed: Number(info[7]),
    mallocFree: Number(info[8]),
  });
})()`;

export async function spawnInspectedServe(
  dataDir: string,
  env: Record<string, string>,
): Promise<InspectedDaemon> {
  const inspectorPort = freePort();
  const daemon = await spawnServe(dataDir, {
    denoFlags: [`--inspect=127.0.0.1:${inspectorPort}`],
    env: { DENO_V8_FLAGS: START_V8_FLAGS, ...env },
    noise: INSPECTOR_NOISE,
  });
  return {
    ...daemon,
    heapAfterGc: () =>
      inspect(inspectorPort, async (call) => {
        await collect(call);
        const usage = await call("Runtime.getHeapUsage");
        const used = usage.result?.usedSize;
        if (typeof used !== "number") {
          throw new Error(`no heap usage: ${JSON.stringify(usage)}`);
        }
        return used;
      }),
    memoryAfterGc: () =>
      inspect(inspectorPort, async (call) => {
        await collect(call);
        const reply = await call("Runtime.evaluate", {
          expression: MEMORY_FIGURES,
          returnByValue: true,
        });
        const value = Object(reply.result?.result).value;
        if (typeof value !== "string") {
          throw new Error(`no memory usage: ${JSON.stringify(reply)}`);
        }
        return JSON.parse(value);
      }),
    heapSnapshot: async (path) => {
      const file = await Deno.open(path, {
        write: true,
        create: true,
        truncate: true,
      });
      const encoder = new TextEncoder();
      let written = Promise.resolve();
      try {
        await inspect(inspectorPort, async (call) => {
          await collect(call);
          const taken = await call("HeapProfiler.takeHeapSnapshot", {
            reportProgress: false,
          });
          if (taken.error) throw new Error(taken.error.message);
        }, (notice) => {
          const chunk = notice.params?.chunk;
          if (
            notice.method === "HeapProfiler.addHeapSnapshotChunk" &&
            typeof chunk === "string"
          ) {
            const bytes = encoder.encode(chunk);
            written = written.then(async () => {
              for (let at = 0; at < bytes.length;) {
                at += await file.write(bytes.subarray(at));
              }
            });
          }
        });
        await written;
      } finally {
        file.close();
      }
    },
  };
}
