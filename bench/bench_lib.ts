// The general bench library, shared by every bench: clean-up of children and
// temp dirs, child processes, a raw stdio JSON-RPC client, memory, number and
// measuring helpers, percentiles; plus seeded text and writing a store the
// way the memory server does, for the memory benches. Not a bench itself (no
// `_bench` suffix).

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  Client,
  LATEST_PROTOCOL_VERSION,
  StreamableHTTPClientTransport,
} from "../platform/mcp_sdk.ts";
import { StdioClientTransport } from "../platform/mcp_sdk_stdio_client.ts";
import { scoped } from "../platform/store/mod.ts";
import { openKvStore } from "../platform/store/kv.ts";
import { createLogger } from "../platform/log.ts";
import { KvBackend } from "../tools/memory/backends/kv.ts";
import { BuiltinEmbedder } from "../tools/memory/embedder_builtin.ts";
import type { Embedder, StoredEntry } from "../tools/memory/model.ts";
import { MemoryService } from "../tools/memory/service.ts";
import { indexText } from "../tools/memory/search_index.ts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const MAIN = join(ROOT, "main.ts");
export const DENO = Deno.execPath();
export const PEER_DIR = join(
  ROOT,
  "node_modules/@modelcontextprotocol/server-memory/",
);
export const PEER = join(PEER_DIR, "dist/index.js");
/** The namespace every bench entry lives in. */
export const NAMESPACE = "bench";

// ------------------------------------------------------------ clean-up

const cleanups: (() => void)[] = [];
let cleanedUp = false;

/** Runs every registered clean-up once, newest first (children before their dirs). */
export function cleanUp(): void {
  if (cleanedUp) return;
  cleanedUp = true;
  for (const cleanup of cleanups.reverse()) {
    try {
      cleanup();
    } catch {
      // already gone
    }
  }
}

globalThis.addEventListener("unload", cleanUp);
if (Deno.build.os !== "windows") {
  // A bench stopped by a signal leaves no servers behind either.
  for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    Deno.addSignalListener(signal, () => {
      cleanUp();
      Deno.exit(code);
    });
  }
}

/** Runs `fn` at clean-up, before everything registered so far (e.g. a last report). */
export function atCleanUp(fn: () => void): void {
  cleanups.push(fn);
}

/** Child pids of `pid` and theirs, from /proc (Linux; none elsewhere). */
export function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  let tasks: Deno.DirEntry[];
  try {
    tasks = [...Deno.readDirSync(`/proc/${pid}/task`)];
  } catch {
    return found;
  }
  for (const task of tasks) {
    let children = "";
    try {
      children = Deno.readTextFileSync(
        `/proc/${pid}/task/${task.name}/children`,
      );
    } catch {
      continue;
    }
    for (const child of children.split(/\s+/).filter((s) => s !== "")) {
      found.push(Number(child), ...descendantsOf(Number(child)));
    }
  }
  return found;
}

/** SIGKILLs `pid` and every process it started (such as a proxy's upstream) at clean-up. */
export function killOnExit(pid: number): void {
  cleanups.push(() => {
    for (const each of [pid, ...descendantsOf(pid)]) {
      try {
        Deno.kill(each, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
}

/** The first line a child writes on stdout (its port, its display); `what` names it in the error when it exits first. */
export async function firstLine(
  stdout: ReadableStream<Uint8Array>,
  what: string,
): Promise<string> {
  const reader = stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${what}: exited before its first line`);
    text += value;
  }
  reader.releaseLock();
  return text.slice(0, text.indexOf("\n"));
}

export function tempDir(prefix = "agentd-membench-"): string {
  const dir = Deno.makeTempDirSync({ prefix });
  cleanups.push(() => Deno.removeSync(dir, { recursive: true }));
  return dir;
}

// ------------------------------------------------------------ numbers

/** Linear-interpolated percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p / 100) * (sorted.length - 1);
  const low = Math.floor(at);
  const high = Math.min(sorted.length - 1, low + 1);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

export const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1);
export const mib = (kib: number) => (kib / 1024).toFixed(1);
export const ratio = (a: number, b: number) => (a / b).toFixed(2);

export interface ProcessMemory {
  rssKiB: number;
  hwmKiB: number;
}

/** VmRSS and VmHWM of a process (Linux only). */
export function memoryOf(pid: number): ProcessMemory | undefined {
  try {
    const status = Deno.readTextFileSync(`/proc/${pid}/status`);
    const field = (name: string) => {
      const found = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
      return found ? Number(found[1]) : NaN;
    };
    return { rssKiB: field("VmRSS"), hwmKiB: field("VmHWM") };
  } catch {
    return undefined;
  }
}

/** A process in a memory table. */
export interface MemoryTarget {
  label: string;
  pid: number;
  /** Spawn to ready, one sample. */
  readyMs: number;
}

/**
 * Prints `title` and VmRSS/VmHWM (MiB) of each target's process, with its
 * ratio to `against(target)`'s in the columns "RSS <versus>" and "peak
 * <versus>"; the first table (after warm-up) also has the ready time and
 * `more`. Processes gone are left out; off Linux it says memory is not
 * measured.
 */
export function printMemoryTable<T extends MemoryTarget>(
  title: string,
  targets: readonly T[],
  options: {
    /** The first column: `name(target)`, else the target's label. */
    nameColumn: string;
    name?: (target: T) => string;
    versus: string;
    against: (target: T) => T | undefined;
    first: boolean;
    more?: (target: T) => Record<string, string>;
  },
): void {
  const rows: Record<string, string>[] = [];
  for (const target of targets) {
    const memory = memoryOf(target.pid);
    if (!memory) continue;
    const other = options.against(target);
    const versus = other ? memoryOf(other.pid) : undefined;
    const vs = (pick: (m: ProcessMemory) => number) =>
      versus ? ratio(pick(memory), pick(versus)) : "";
    rows.push({
      [options.nameColumn]: options.name?.(target) ?? target.label,
      "RSS MiB": mib(memory.rssKiB),
      [`RSS ${options.versus}`]: vs((m) => m.rssKiB),
      "peak MiB": mib(memory.hwmKiB),
      [`peak ${options.versus}`]: vs((m) => m.hwmKiB),
      ...(options.first
        ? {
          "ready ms (1 sample)": target.readyMs.toFixed(0),
          ...options.more?.(target),
        }
        : {}),
    });
  }
  console.log(`\n${title}`);
  if (rows.length) console.table(rows);
  else console.log("(no /proc/<pid>/status: memory is measured on Linux only)");
}

/** cpuMsOf, for benches that report nothing without it. */
export function cpuMsOrThrow(pid: number): number {
  const ms = cpuMsOf(pid);
  if (ms === undefined) {
    throw new Error(`no CPU time for process ${pid} (Linux /proc only)`);
  }
  return ms;
}

/** CPU time (user + system, all threads) a process has used so far, in ms (Linux only). */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // Fields after "pid (comm) ": state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10 : undefined; // USER_HZ is 100
  } catch {
    return undefined;
  }
}

export function nodeVersion(): string {
  const out = new Deno.Command("node", { args: ["--version"] }).outputSync();
  return new TextDecoder().decode(out.stdout).trim();
}

export function peerVersion(): string {
  return z.object({ version: z.string() }).parse(
    JSON.parse(Deno.readTextFileSync(join(PEER_DIR, "package.json"))),
  ).version;
}

// ------------------------------------------------------------ measuring

/**
 * `rounds` rounds over `items`, each round starting one further along, so
 * that drift on a shared machine hits every item alike.
 */
export function* inTurn<T>(items: readonly T[], rounds: number): Generator<T> {
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < items.length; i++) {
      yield items[(round + i) % items.length];
    }
  }
}

/**
 * Each round runs every one of `calls` once (see inTurn); per call, how long
 * each run took (ms) and the CPU ms process `pid` spent in them in all.
 */
export async function interleaved<T>(
  calls: readonly T[],
  rounds: number,
  run: (call: T) => Promise<void>,
  pid?: number,
): Promise<Map<T, { samples: number[]; cpuMs: number }>> {
  const out = new Map(
    calls.map((c) => [c, { samples: [] as number[], cpuMs: 0 }]),
  );
  for (const call of inTurn(calls, rounds)) {
    const cpuBefore = pid === undefined ? undefined : cpuMsOf(pid);
    const started = performance.now();
    await run(call);
    const elapsed = performance.now() - started;
    const cpuAfter = pid === undefined ? undefined : cpuMsOf(pid);
    const result = out.get(call);
    if (!result) continue;
    result.samples.push(elapsed);
    if (cpuBefore !== undefined && cpuAfter !== undefined) {
      result.cpuMs += cpuAfter - cpuBefore;
    }
  }
  return out;
}

export interface Throughput<K extends string> {
  /** Calls per second. */
  perSecond: number;
  /** CPU ms per call of each process; missing where /proc cannot tell. */
  cpuMs: Map<K, number>;
}

/** CPU ms each process has used so far; missing where /proc cannot tell. */
function cpuOf<K extends string>(
  pids: Record<K, number | undefined>,
): Map<K, number> {
  const out = new Map<K, number>();
  for (const key in pids) {
    const pid = pids[key];
    const used = pid === undefined ? undefined : cpuMsOf(pid);
    if (used !== undefined) out.set(key, used);
  }
  return out;
}

/**
 * `calls` runs per target, `inFlight` at a time, in `rounds` rounds taking
 * the targets in turn (see inTurn); per target the calls per second and the
 * CPU per call of the processes `pids` names.
 */
export async function throughput<T, K extends string>(
  targets: readonly T[],
  options: {
    calls: number;
    rounds: number;
    inFlight: number;
    run: (target: T) => Promise<void>;
    pids: (target: T) => Record<K, number | undefined>;
  },
): Promise<Map<T, Throughput<K>>> {
  const perRound = options.calls / options.rounds;
  const totals = new Map(
    targets.map((t) => [t, { seconds: 0, cpuMs: new Map<K, number>() }]),
  );
  for (const target of inTurn(targets, options.rounds)) {
    const pids = options.pids(target);
    const before = cpuOf(pids);
    let issued = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: options.inFlight }, async () => {
        while (issued < perRound) {
          issued++;
          await options.run(target);
        }
      }),
    );
    const total = totals.get(target);
    if (!total) continue;
    total.seconds += (performance.now() - started) / 1000;
    const after = cpuOf(pids);
    for (const [key, from] of before) {
      const to = after.get(key);
      if (to === undefined) continue;
      total.cpuMs.set(key, (total.cpuMs.get(key) ?? 0) + to - from);
    }
  }
  return new Map(targets.map((target) => {
    const total = totals.get(target);
    const cpuMs = new Map<K, number>();
    for (const [key, used] of total?.cpuMs ?? []) {
      cpuMs.set(key, used / options.calls);
    }
    return [target, {
      perSecond: options.calls / (total?.seconds ?? NaN),
      cpuMs,
    }];
  }));
}

// ------------------------------------------------------------ seeded text

/** mulberry32: a small, fast, seedable PRNG returning [0, 1). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

export function int(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** Common words of notes an agent keeps: work, code, people, places, time. */
export const COMMON_WORDS = [
  ...new Set((
    "the a of to and in for on with is was that it as at by from this be are " +
    "we will should after before when not but or all new our has have had " +
    "project team meeting deploy release build test server client database " +
    "cache queue worker service api endpoint request response error failure " +
    "timeout retry latency memory disk network cluster node region backup " +
    "restore migration schema index query table column user account customer " +
    "invoice payment order shipment report dashboard alert incident ticket " +
    "review branch commit merge pipeline config secret token key certificate " +
    "login session password email message notification schedule calendar " +
    "week month year today tomorrow yesterday morning evening deadline budget " +
    "plan goal task priority owner manager engineer designer writer analyst " +
    "office home remote travel flight hotel train airport city street " +
    "lunch dinner coffee tea breakfast recipe kitchen garden book movie music " +
    "doctor appointment health exercise running cycling weekend holiday " +
    "family friend birthday gift party phone laptop screen keyboard printer " +
    "document draft note summary decision question answer idea problem fix " +
    "bug feature version update upgrade install setup change issue risk " +
    "cost price contract vendor license support team lead review approve " +
    "reject wait start stop finish begin end open close move keep remove " +
    "add check send receive read write call ask tell show find use need want " +
    "like prefer remember forget learn teach explain agree choose decide buy " +
    "sell pay rent borrow lend fast slow large small cheap expensive quiet " +
    "loud early late long short old young good bad easy hard important urgent " +
    "main second last next first final daily weekly monthly quarterly " +
    "north south east west blue green red black white staging production " +
    "development local shared private public internal external primary " +
    "replica leader follower latency throughput storage bandwidth quota limit"
  ).split(/\s+/)),
];

const ONSETS = "b c d f g h j k l m n p r s t v w z br cr dr fl gr kl pr st tr"
  .split(" ");
const VOWELS = "a e i o u ai ea io ou".split(" ");
const CODAS = ["", "", "n", "r", "l", "s", "th", "x", "m", "nd", "rk"];

/** Distinct made-up words (a long tail: names, codenames, jargon), deterministic per seed. */
export function madeUpWords(
  count: number,
  seed: number,
  avoid: ReadonlySet<string> = new Set(),
): string[] {
  const random = seeded(seed);
  const words = new Set<string>();
  while (words.size < count) {
    let word = "";
    const syllables = int(random, 2, 3);
    for (let i = 0; i < syllables; i++) {
      word += pick(random, ONSETS) + pick(random, VOWELS);
    }
    word += pick(random, CODAS);
    if (!avoid.has(word)) words.add(word);
  }
  return [...words];
}

/** Samples ranks 0..n-1 with probability ∝ 1/(rank+1)^s (Zipf's law). */
export class Zipf {
  #cdf: Float64Array;

  constructor(readonly n: number, s = 1.05) {
    this.#cdf = new Float64Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) this.#cdf[i] = sum += 1 / Math.pow(i + 1, s);
    for (let i = 0; i < n; i++) this.#cdf[i] /= sum;
  }

  sample(random: () => number): number {
    const u = random();
    let low = 0;
    let high = this.n - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.#cdf[mid] < u) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}

/** Common words first, then 6,000 made-up ones: ranks for a Zipf draw. */
export const VOCABULARY: readonly string[] = [
  ...COMMON_WORDS,
  ...madeUpWords(6000, 7, new Set(COMMON_WORDS)),
];
const ZIPF = new Zipf(VOCABULARY.length);

export const TAGS = (
  "work personal project infra frontend backend ops finance travel health " +
  "family todo decision meeting-notes incident customer research idea " +
  "reference draft archive urgent weekly docs"
).split(" ");

/** Sentences of 6–14 words drawn from the vocabulary, `min`–`max` words in all. */
export function paragraph(
  random: () => number,
  min = 20,
  max = 60,
): string {
  const total = int(random, min, max);
  const sentences: string[] = [];
  let left = total;
  while (left > 0) {
    const length = Math.min(left, int(random, 6, 14));
    const words: string[] = [];
    for (let i = 0; i < length; i++) {
      words.push(VOCABULARY[ZIPF.sample(random)]);
    }
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    sentences.push(`${words.join(" ")}.`);
    left -= length;
  }
  return sentences.join(" ");
}

export interface EntryInput {
  namespace: string;
  key: string;
  value: string;
  tags: string[];
}

/** The i-th filler entry: a 20–60 word note with 0–3 tags. */
export function fillerEntry(random: () => number, i: number): EntryInput {
  const tags = new Set<string>();
  const tagCount = int(random, 0, 3);
  while (tags.size < tagCount) tags.add(pick(random, TAGS));
  return {
    namespace: NAMESPACE,
    key: `note-${i}`,
    value: paragraph(random),
    tags: [...tags],
  };
}

/**
 * A query of `words` words drawn the way the notes are, from ranks `from` on
 * (skipping the most common words), each at least `minLength` characters.
 */
export function queryText(
  random: () => number,
  words: number,
  options: { from?: number; minLength?: number } = {},
): string {
  const from = options.from ?? 40;
  const minLength = options.minLength ?? 1;
  const out: string[] = [];
  while (out.length < words) {
    const rank = ZIPF.sample(random);
    const word = VOCABULARY[rank];
    if (rank >= from && word.length >= minLength) out.push(word);
  }
  return out.join(" ");
}

// ------------------------------------------------------------ stores

/** The memory server's service over `backend`, in this process: a fresh data key, quiet logs. */
export async function memoryService(
  backend: KvBackend,
  embedder: Embedder = new BuiltinEmbedder(),
): Promise<MemoryService> {
  return new MemoryService({
    backend,
    embedder,
    dataKey: await crypto.subtle.generateKey(
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    ),
    log: createLogger({ level: "error" }),
  });
}

/** A bench entry as the store keeps it, written at `now`, before its embedding. */
export function unembedded(input: EntryInput, now: string): StoredEntry {
  return {
    ...input,
    sensitive: false,
    created_at: now,
    updated_at: now,
    embedding: null,
  };
}

/**
 * Writes entries into `<dataDir>/store.kv` exactly where and how `agentd mcp
 * memory --data-dir <dataDir>` keeps them: the daemon scopes the store to
 * ["svc-memory"] (cli/boot.ts) and the local backend to ["entries"]
 * (tools/memory/mod.ts); each entry carries the builtin embedding of its
 * indexText, as MemoryService's store does.
 */
export async function populate(
  dataDir: string,
  entries: Iterable<EntryInput>,
): Promise<{ count: number; ms: number }> {
  const kv = await openKvStore(join(dataDir, "store.kv"));
  const backend = await KvBackend.open(
    scoped(scoped(kv, ["svc-memory"]), ["entries"]),
  );
  const embedder = new BuiltinEmbedder();
  const started = performance.now();
  let count = 0;
  try {
    const now = new Date().toISOString();
    // 64 writes in flight, as concurrent callers would: they share commits.
    let wave: Promise<unknown>[] = [];
    for (const input of entries) {
      const entry = unembedded(input, now);
      const [vector] = await embedder.embed([indexText(entry)]);
      entry.embedding = { embedder: embedder.id, vector };
      wave.push(backend.put(entry, "upsert"));
      count++;
      if (wave.length === 64) {
        await Promise.all(wave);
        wave = [];
      }
    }
    await Promise.all(wave);
  } finally {
    await backend.close();
    await kv.close();
  }
  return { count, ms: performance.now() - started };
}

/** The peer's JSONL file: one entity per entry (name = key, one observation = value). */
export async function writePeerGraph(
  path: string,
  entries: Iterable<EntryInput>,
): Promise<void> {
  const lines: string[] = [];
  for (const entry of entries) {
    lines.push(JSON.stringify({
      type: "entity",
      name: entry.key,
      entityType: "memory",
      observations: [entry.value],
    }));
  }
  await Deno.writeTextFile(path, lines.join("\n"));
}

// ------------------------------------------------------------ commands

export interface Command {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** `deno run -A [denoFlags] main.ts <args>`: no type check (deno run's default). */
export function agentdCommand(
  args: string[],
  denoFlags: string[] = [],
): Command {
  return { command: DENO, args: ["run", "-A", ...denoFlags, MAIN, ...args] };
}

export function peerCommand(memoryFile: string): Command {
  return {
    command: "node",
    args: [PEER],
    env: { MEMORY_FILE_PATH: memoryFile },
  };
}

// ------------------------------------------------------------ raw stdio client

const Response = z.object({ id: z.number() }).loose();

/** Newline-delimited JSON-RPC responses from a child's stdout, by id. */
class LineReader {
  #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";

  constructor(stdout: ReadableStream<Uint8Array>) {
    this.#reader = stdout.pipeThrough(new TextDecoderStream()).getReader();
  }

  async response(id: number): Promise<unknown> {
    for (;;) {
      let newline = this.#buffer.indexOf("\n");
      while (newline >= 0) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        if (line.trim() !== "") {
          const message: unknown = JSON.parse(line);
          const parsed = Response.safeParse(message);
          if (parsed.success && parsed.data.id === id) return message;
        }
        newline = this.#buffer.indexOf("\n");
      }
      const { value, done } = await this.#reader.read();
      if (done) throw new Error(`stdout closed before response ${id}`);
      this.#buffer += value;
    }
  }

  async drain(): Promise<void> {
    while (!(await this.#reader.read()).done) {
      // discard
    }
  }
}

const ToolsList = z.object({
  result: z.object({ tools: z.array(z.object({ name: z.string() })) }),
});

export interface ColdStart {
  /** Spawn to the initialize response. */
  initializeMs: number;
  /** Spawn to the tools/list response. */
  toolsListMs: number;
  tools: number;
}

/**
 * Spawns `cmd`, sends initialize, notifications/initialized and tools/list
 * over stdio with no MCP client library, and times spawn → each answer.
 * Then closes stdin and waits for the child (SIGKILL after 5 s).
 */
export async function coldStart(
  cmd: Command,
  cwd: string,
  timeoutMs = 60_000,
): Promise<ColdStart> {
  const encoder = new TextEncoder();
  const started = performance.now();
  const child = new Deno.Command(cmd.command, {
    args: cmd.args,
    cwd,
    env: cmd.env,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // gone
    }
  }, timeoutMs);
  const writer = child.stdin.getWriter();
  const send = (message: unknown) =>
    writer.write(encoder.encode(`${JSON.stringify(message)}\n`));
  const reader = new LineReader(child.stdout);
  try {
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "agentd-bench", version: "1.0.0" },
      },
    });
    await reader.response(1);
    const initializeMs = performance.now() - started;
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    const list = ToolsList.parse(await reader.response(2));
    const toolsListMs = performance.now() - started;
    return { initializeMs, toolsListMs, tools: list.result.tools.length };
  } finally {
    await writer.close().catch(() => {});
    const drained = reader.drain().catch(() => {});
    const killer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // gone
      }
    }, 5000);
    await child.status;
    await drained;
    clearTimeout(killer);
    clearTimeout(timer);
  }
}

const ListeningLine = z.object({
  event: z.literal("listening"),
  port: z.number(),
});

/** The port of the first `listening` log line on stderr; keeps draining it after. */
async function listeningPort(
  stderr: ReadableStream<Uint8Array>,
): Promise<number> {
  const reader = stderr.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("agentd serve exited before listening");
    buffer += value;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue;
      }
      const listening = ListeningLine.safeParse(parsed);
      if (listening.success) {
        (async () => {
          while (!(await reader.read()).done) {
            // keep the pipe empty
          }
        })().catch(() => {});
        return listening.data.port;
      }
    }
  }
}

/** `agentd serve --servers memory` on a free port, with `count` SDK clients on /mcp/memory. */
export async function memoryServeClients(
  count: number,
  /** Deno flags for the daemon (e.g. `--inspect=127.0.0.1:9230` for a profile). */
  denoFlags: readonly string[] = [],
): Promise<{
  clients: Client[];
  /** The daemon's process id (its CPU time is read from /proc). */
  pid: number;
  /** Closes the clients and stops the daemon. */
  close(): Promise<void>;
}> {
  const child = new Deno.Command(DENO, {
    args: [
      "run",
      "-A",
      ...denoFlags,
      MAIN,
      "serve",
      "--servers",
      "memory",
      "--port",
      "0",
      "--data-dir",
      tempDir(),
    ],
    cwd: ROOT,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  killOnExit(child.pid);
  const port = await listeningPort(child.stderr);
  const clients: Client[] = [];
  for (let c = 0; c < count; c++) {
    const client = new Client({ name: `agentd-bench-${c}`, version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL(`http://127.0.0.1:${port}/mcp/memory`),
      ),
    );
    clients.push(client);
  }
  return {
    clients,
    pid: child.pid,
    async close() {
      await Promise.all(clients.map((client) => client.close()));
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/** A node of a node:inspector CPU profile (`Profiler.stop`), as far as the benches read it. */
export interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/**
 * A CPU profile's samples by function and by group (`groupOf` a file path
 * relative to the repository, npm modules as "npm:…"; default the file),
 * and `top(map, n)` giving the largest as table rows with their share.
 */
export function profileShares(
  nodes: readonly ProfileNode[],
  groupOf: (file: string, functionName: string) => string = (file, name) =>
    file || name,
): {
  total: number;
  byFunction: Map<string, number>;
  byGroup: Map<string, number>;
  top(map: Map<string, number>, n: number): { name: string; "%": string }[];
} {
  const total = nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const byFunction = new Map<string, number>();
  const byGroup = new Map<string, number>();
  for (const node of nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(`file://${ROOT}`, "").replace(
      /^.*node_modules\/\.deno\//,
      "npm:",
    );
    const key = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
    const group = groupOf(file, functionName);
    byGroup.set(group, (byGroup.get(group) ?? 0) + hits);
  }
  const top = (map: Map<string, number>, n: number) =>
    [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map((
      [name, hits],
    ) => ({ name, "%": (100 * hits / total).toFixed(1) }));
  return { total, byFunction, byGroup, top };
}

/**
 * Counts Deno KV operations of every Deno.Kv in this process while `on`:
 * get, getMany, list and commit, each named by `nameOf` (given the key, a
 * getMany's first key and its size, or a list's prefix; default: the op).
 */
export function countKvOps(
  nameOf: (op: string, key: unknown, size?: number) => string = (op) => op,
): { ops: Map<string, number>; on: boolean } {
  const counter = { ops: new Map<string, number>(), on: false };
  const count = (op: string, key: unknown, size?: number) => {
    if (!counter.on) return;
    const name = nameOf(op, key, size);
    counter.ops.set(name, (counter.ops.get(name) ?? 0) + 1);
  };
  const hook = (
    target: object,
    method: string,
    before: (args: unknown[]) => void,
    after?: (result: unknown) => void,
  ) => {
    const original: unknown = Reflect.get(target, method);
    if (typeof original !== "function") return;
    Reflect.set(target, method, function (this: unknown, ...args: unknown[]) {
      before(args);
      const result = Reflect.apply(original, this, args);
      after?.(result);
      return result;
    });
  };
  const kv = Deno.Kv.prototype;
  hook(kv, "get", ([key]) => count("get", key));
  hook(kv, "getMany", ([keys]) => {
    if (Array.isArray(keys)) count("getMany", keys[0], keys.length);
  });
  hook(kv, "list", ([selector]) =>
    count(
      "list",
      typeof selector === "object" && selector !== null
        ? Reflect.get(selector, "prefix")
        : undefined,
    ));
  hook(kv, "atomic", () => {}, (atomic) => {
    if (typeof atomic === "object" && atomic !== null) {
      // A commit is named by the first key it sets (or deletes).
      let first: unknown;
      const note = ([key]: unknown[]) => first ??= key;
      hook(atomic, "set", note);
      hook(atomic, "delete", note);
      hook(atomic, "commit", () => count("commit", first));
    }
  });
  return counter;
}

/** One inspector (CDP) connection: `send` a method, get its result. */
export async function inspector(port: number) {
  const Target = z.array(z.object({ webSocketDebuggerUrl: z.string() }));
  let targets: z.infer<typeof Target> = [];
  const deadline = Date.now() + 30_000;
  while (targets.length === 0) {
    if (Date.now() > deadline) {
      throw new Error(`no inspector target on port ${port} after 30 s`);
    }
    try {
      targets = Target.parse(
        await (await fetch(`http://127.0.0.1:${port}/json/list`)).json(),
      );
    } catch {
      // Not listening yet.
    }
    if (targets.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve) => socket.addEventListener("open", resolve));
  const waiting = new Map<number, (result: unknown) => void>();
  const Reply = z.object({ id: z.number().optional(), result: z.unknown() });
  socket.addEventListener("message", (event) => {
    const reply = Reply.parse(JSON.parse(String(event.data)));
    if (reply.id !== undefined) waiting.get(reply.id)?.(reply.result);
  });
  let next = 0;
  return {
    send(method: string, params: object = {}): Promise<unknown> {
      const id = ++next;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    close: () => socket.close(),
  };
}

/** Prints a profile's self time by file (an npm package as one) and by function; its shares. */
export function printShares(
  nodes: readonly ProfileNode[],
): ReturnType<typeof profileShares> {
  const shares = profileShares(
    nodes,
    (file, name) =>
      file.startsWith("npm:")
        ? file.split("/").slice(0, 3).join("/")
        : file || `(${name})`,
  );
  console.table(shares.top(shares.byGroup, 25));
  console.table(shares.top(shares.byFunction, 40));
  return shares;
}

/** An MCP SDK client over stdio to `cmd` (its stderr ignored), killed with the bench. */
export async function stdioClient(
  cmd: Command,
): Promise<{ client: Client; pid: number | null }> {
  const transport = new StdioClientTransport({
    command: cmd.command,
    args: cmd.args,
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...cmd.env },
    stderr: "ignore",
  });
  const client = new Client({ name: "agentd-bench", version: "1.0.0" });
  await client.connect(transport);
  if (transport.pid !== null) killOnExit(transport.pid);
  return { client, pid: transport.pid };
}

const CdpProfile = z.object({
  profile: z.object({
    nodes: z.array(z.object({
      id: z.number(),
      callFrame: z.object({
        functionName: z.string(),
        url: z.string(),
        lineNumber: z.number(),
      }),
      hitCount: z.number().optional(),
      children: z.array(z.number()).optional(),
    })),
  }),
});
export type CdpProfileNode = z.infer<
  typeof CdpProfile
>["profile"]["nodes"][number];

/** Stops the inspector's CPU profiler: the profile's nodes, and the profile as sent. */
export async function stopProfile(
  cdp: Awaited<ReturnType<typeof inspector>>,
): Promise<{ nodes: CdpProfileNode[]; raw: unknown }> {
  const raw = await cdp.send("Profiler.stop");
  return { nodes: CdpProfile.parse(raw).profile.nodes, raw };
}
