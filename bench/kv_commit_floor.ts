// What one durable Deno KV commit costs when commits do not follow each other:
// the floor under every row of issue 37 that waits for a commit (a sequential
// store_memory, the append of an agent turn). No agentd code runs here: raw
// Deno.openKv on a fresh file in a temp dir, one commit at a time.
//
// Shapes, as agentd writes them (bench/README.md, Memory server, "Issue 37,
// the commit floor"):
//   two keys    a value and a counter: memory_stores_bench.ts's "floor" row
//   store       store_memory of a new tagged entry: 2 checks, the entry, its
//               journal row (the vector), the namespace counter, 2 tag keys
//   append      a turn's store_conversation: the session record (checked),
//               2 messages, an audit record
// Pauses before each commit:
//   back to back    none: the next commit starts when the last one answers
//   idle P ms       the main thread blocked P ms (Atomics.wait: no event loop,
//                   no timers), as a server waits for its client or a turn for
//                   the model between two commits
//   busy P ms       the main thread spinning P ms, as a server does the work of
//                   a call before its commit
// Each cell (shape and pause) runs in blocks of 25 commits on its shape's
// file, and the blocks alternate over the cells, so other load on the machine
// hits them alike. Prints p50/p90 per shape and pause, and each p50 ÷ the
// shape's back-to-back p50.
//
//   deno run -A bench/kv_commit_floor.ts [commits per cell, default 600]

import { join } from "node:path";
import { cleanUp, percentile, tempDir } from "./bench_lib.ts";

const COMMITS = Number(Deno.args[0] ?? 600);
if (!Number.isSafeInteger(COMMITS) || COMMITS < 50) {
  throw new Error("commits per cell: a whole number ≥ 50");
}
const BLOCK = 25;
const BLOCKS = Math.ceil(COMMITS / (BLOCK - 1));

/** `last`: the versionstamp of the shape's previous commit (its counter's version). */
type Shape = (
  atomic: Deno.AtomicOperation,
  i: number,
  last: string | null,
) => void;

const bytes = (n: number) => new Uint8Array(n).fill(7);
const M = ["d", "svc-memory", "entries"];

const SHAPES: Record<string, Shape> = {
  "two keys": (a, i) => {
    a.set(["d", "e", "bench", `note-${i}`], bytes(300));
    a.set(["d", "n", "bench"], bytes(3));
  },
  store: (a, i, last) => {
    const key = `note-${i}`;
    a.check({ key: [...M, "e", "bench", key], versionstamp: null });
    a.check({ key: [...M, "n", "bench"], versionstamp: last });
    a.set([...M, "e", "bench", key], bytes(300));
    a.set([...M, "j", "bench", key], bytes(297));
    a.set([...M, "n", "bench"], bytes(3));
    a.set([...M, "t", "bench", "infra", key], bytes(4));
    a.set([...M, "t", "bench", "weekly", key], bytes(4));
  },
  append: (a, i) => {
    const session = `profile-${i}`;
    a.check({ key: [...M, "s", "agent", session], versionstamp: null });
    a.set([...M, "s", "agent", session], bytes(11));
    a.set([...M, "m", "agent", session, "000000000000"], bytes(101));
    a.set([...M, "m", "agent", session, "000000000001"], bytes(145));
    a.set(
      ["d", "agentd", "policy", "audit", `${Date.now()}-${i}`],
      bytes(343),
    );
  },
};

const PAUSES: { label: string; ms: number; busy: boolean }[] = [
  { label: "back to back", ms: 0, busy: false },
  { label: "idle 0.5 ms", ms: 0.5, busy: false },
  { label: "idle 1 ms", ms: 1, busy: false },
  { label: "idle 2 ms", ms: 2, busy: false },
  { label: "busy 0.7 ms", ms: 0.7, busy: true },
];

const blocker = new Int32Array(new SharedArrayBuffer(4));
function pause(ms: number, busy: boolean): void {
  if (ms === 0) return;
  if (!busy) {
    Atomics.wait(blocker, 0, 0, ms);
    return;
  }
  const until = performance.now() + ms;
  while (performance.now() < until) { /* the work of a call */ }
}

const dir = tempDir("agentd-kvfloor-");
const stores = new Map<string, Deno.Kv>();
for (const name of Object.keys(SHAPES)) {
  stores.set(name, await Deno.openKv(join(dir, `${name}.kv`)));
}

const samples = new Map<string, number[]>();
const last = new Map<string, string>();
let serial = 0;
try {
  // Blocks of BLOCK commits of one cell, so that "back to back" commits do
  // follow each other on one file; the blocks alternate over the cells.
  for (let block = 0; block < BLOCKS + 1; block++) {
    for (const [name, shape] of Object.entries(SHAPES)) {
      const kv = stores.get(name);
      if (!kv) throw new Error(`no store for ${name}`);
      for (const p of PAUSES) {
        for (let i = 0; i < BLOCK; i++) {
          const atomic = kv.atomic();
          shape(atomic, serial++, last.get(name) ?? null);
          pause(p.ms, p.busy);
          const started = performance.now();
          const result = await atomic.commit();
          const took = performance.now() - started;
          if (!result.ok) {
            throw new Error(`${name}: a commit failed its check`);
          }
          last.set(name, result.versionstamp);
          // The first block warms up (JIT, the files' first pages); the first
          // commit of a block follows another cell's.
          if (block === 0 || i === 0) continue;
          const cell = `${name}|${p.label}`;
          const list = samples.get(cell) ?? [];
          list.push(took);
          samples.set(cell, list);
        }
      }
    }
  }
} finally {
  for (const kv of stores.values()) kv.close();
  cleanUp();
}

const rows = [];
for (const name of Object.keys(SHAPES)) {
  const base = percentile(samples.get(`${name}|back to back`) ?? [], 50);
  for (const p of PAUSES) {
    const list = samples.get(`${name}|${p.label}`) ?? [];
    const p50 = percentile(list, 50);
    rows.push({
      shape: name,
      "before each commit": p.label,
      "p50 ms": p50.toFixed(3),
      "p90 ms": percentile(list, 90).toFixed(3),
      "÷ back to back": (p50 / base).toFixed(2),
    });
  }
}
const load = Deno.loadavg().map((n) => n.toFixed(1)).join(" ");
console.log(
  `Deno KV commit, one at a time (Deno ${Deno.version.deno}, ${COMMITS} commits per cell, load ${load})`,
);
console.table(rows);
