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
}

interface Reply {
  id: number;
  result?: Record<string, unknown>;
  error?: { message?: string };
}

function isReply(value: unknown): value is Reply {
  return typeof value === "object" && value !== null && "id" in value &&
    typeof value.id === "number";
}

/** One CDP connection; each call opens its own, so nothing lingers between samples. */
async function inspect<T>(
  port: number,
  use: (call: (method: string) => Promise<Reply>) => Promise<T>,
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
  };
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = () => reject(new Error("inspector connection failed"));
  });
  let next = 0;
  const call = (method: string) =>
    new Promise<Reply>((resolve) => {
      waiting.set(++next, resolve);
      socket.send(JSON.stringify({ id: next, method, params: {} }));
    });
  try {
    return await use(call);
  } finally {
    socket.close();
    await closed.promise;
  }
}

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
        const collected = await call("HeapProfiler.collectGarbage");
        if (collected.error) throw new Error(collected.error.message);
        const usage = await call("Runtime.getHeapUsage");
        const used = usage.result?.usedSize;
        if (typeof used !== "number") {
          throw new Error(`no heap usage: ${JSON.stringify(usage)}`);
        }
        return used;
      }),
  };
}
