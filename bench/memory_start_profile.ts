// A CPU profile (node:inspector) of the memory server's start at size: the
// persisted index loaded by KvBackend.open from a KV file of N entries (the
// part of `agentd mcp memory`'s start that grows with the store), timed over
// a few opens, with the CPU of every thread, the heap and RSS it adds, and
// the files and functions with the most self time of the main thread.
//
//   deno run -A bench/memory_start_profile.ts [entries] [opens] [dir]
//
// Without `dir` the store is written first into a temp dir (64 writes in
// flight, as bench/memory_search_bench.ts's populate: minutes at 100k); with
// a `dir` that already holds `store.kv` it is reused (and kept). Opens after
// the first measure a warm page cache, as a restart does. Each open logs its
// `memory_index_loaded` report: `loaded` (snapshot), `rebuilt`, `replayed`,
// and `image` (read from the local index image, index_image.ts, instead of
// the store's parts: the first open reads the parts and writes the image,
// which close() waits for, when `dir` holds none of this snapshot).
// MEMORY_PROFILE_CPU=1: no profiler, only times.

import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { createLogger } from "../platform/log.ts";
import { scoped } from "../platform/store/mod.ts";
import { openKvStore } from "../platform/store/kv.ts";
import { KvBackend } from "../tools/memory/backends/kv.ts";
import {
  cleanUp,
  type EntryInput,
  fillerEntry,
  memoryOf,
  populate,
  profileShares,
  seeded,
  tempDir,
} from "./bench_lib.ts";

const size = Number(Deno.args[0] ?? 100_000);
const opens = Number(Deno.args[1] ?? 3);
const dir = Deno.args[2] ?? tempDir();
const profiling = !Deno.env.get("MEMORY_PROFILE_CPU");

function* entries(count: number): Iterable<EntryInput> {
  const random = seeded(42);
  for (let i = 0; i < count; i++) yield fillerEntry(random, i);
}

/** CPU ms of this process (user + system, all threads). */
function cpuMs(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const path = join(dir, "store.kv");
const exists = await Deno.stat(path).then(() => true, () => false);
if (!exists) {
  const written = await populate(dir, entries(size));
  console.log(
    `wrote ${written.count} entries in ${
      (written.ms / 1000).toFixed(1)
    } s into ${dir}`,
  );
}

const rows: Record<string, string | number>[] = [];
const session = new Session();
try {
  for (let open = 1; open <= opens; open++) {
    const last = open === opens;
    if (profiling && last) {
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 200 });
      await session.post("Profiler.start");
    }
    const reports: Record<string, unknown>[] = [];
    const logger = createLogger({
      sink: (line) => {
        const record = JSON.parse(line);
        if (record.event === "memory_index_loaded") reports.push(record);
      },
    });
    const rssBefore = memoryOf(Deno.pid)?.rssKiB ?? NaN;
    const cpu = cpuMs();
    const started = performance.now();
    const kv = await openKvStore(path);
    const backend = await KvBackend.open(
      scoped(scoped(kv, ["svc-memory"]), ["entries"]),
      // As `agentd mcp memory` opens it (backends/open.ts).
      { logger, images: join(dir, "memory-index") },
    );
    const ms = performance.now() - started;
    const used = cpuMs() - cpu;
    const rss = memoryOf(Deno.pid)?.rssKiB ?? NaN;
    const report = reports[0] ?? {};
    rows.push({
      open,
      "open ms": ms.toFixed(0),
      "CPU ms": used,
      "RSS +MiB": ((rss - rssBefore) / 1024).toFixed(1),
      "RSS MiB": (rss / 1024).toFixed(1),
      entries: String(report.entries ?? "?"),
      loaded: String(report.loaded ?? "?"),
      rebuilt: String(report.rebuilt ?? "?"),
      replayed: String(report.replayed ?? "?"),
      image: String(report.images ?? "-"),
      load: Deno.loadavg()[0].toFixed(1),
    });
    if (profiling && last) {
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      const { total, byFunction, byGroup, top } = profileShares(profile.nodes);
      console.log(`open ${open}: ${total} samples of the main thread`);
      console.table(top(byGroup, 20));
      console.table(top(byFunction, 30));
    }
    await backend.close();
    kv.close();
  }
} finally {
  console.table(rows);
  if (Deno.args[2] === undefined) cleanUp();
}
