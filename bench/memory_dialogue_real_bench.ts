// Recall of the memory server's built-in search on the second, LoCoMo-like
// dialogue set (bench/memory_dialogue_real_set.ts): chat turns stored one per
// entry, questions whose evidence is one turn, recall@5 and MRR@10 of that
// turn, on the tuning half and the held-out half of the templates. Plain BM25
// is the same baseline as bench/memory_dialogue_bench.ts (lowercased
// alphanumeric words, no stop words, no stemming, k1 1.2, b 0.75); lexical
// is KvBackend.search with the query terms search_memory uses (queryTerms),
// hybrid is MemoryService.search. Tune on the tuning half only.
//
//   deno bench -A bench/memory_dialogue_real_bench.ts
//   BENCH_DIALOGUE_MISSES=hybrid:tuning deno run -A bench/memory_dialogue_real_bench.ts

import { createLogger } from "../platform/log.ts";
import { openKvStore } from "../platform/store_kv.ts";
import { KvBackend } from "../tools/memory/backends/kv.ts";
import { BuiltinEmbedder } from "../tools/memory/embedder_builtin.ts";
import { queryTerms } from "../tools/memory/search_index.ts";
import { MemoryService } from "../tools/memory/service.ts";
import {
  REAL_SEED,
  realDialogues,
  type RealQuestion,
  type RealTurn,
} from "./memory_dialogue_real_set.ts";
import { plainBm25 } from "./plain_bm25.ts";

const { conversations, questions } = realDialogues();

const kv = await openKvStore(":memory:");
const backend = await KvBackend.open(kv);
const memory = new MemoryService({
  backend,
  embedder: new BuiltinEmbedder(),
  dataKey: await crypto.subtle.generateKey(
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  ),
  log: createLogger({ level: "error" }),
});
const caller = {};
const plain = new Map<string, (query: string) => string[]>();
for (const { namespace, turns } of conversations) {
  plain.set(namespace, plainBm25(turns));
  for (const turn of turns) {
    await memory.store(caller, { namespace, key: turn.key, value: turn.value });
  }
}

type Mode = "plain BM25" | "lexical" | "hybrid";
const MODES: Mode[] = ["plain BM25", "lexical", "hybrid"];

async function ranked(mode: Mode, q: RealQuestion): Promise<string[]> {
  if (mode === "plain BM25") return plain.get(q.namespace)?.(q.text) ?? [];
  if (mode === "hybrid") {
    const { hits } = await memory.search(caller, q.namespace, q.text, 10);
    return hits.map((h) => h.key);
  }
  const rankings = await backend.search(q.namespace, {
    text: q.text,
    terms: queryTerms(q.text),
    limit: 10,
  });
  return rankings.lexical.map((hit) => hit.key);
}

const misses = Deno.env.get("BENCH_DIALOGUE_MISSES"); // e.g. "hybrid:tuning" prints what it missed
const rows = [];
for (const half of ["tuning", "held-out"] as const) {
  const asked = questions.filter((q) => q.half === half);
  for (const mode of MODES) {
    let recall5 = 0;
    let mrr = 0;
    for (const q of asked) {
      const keys = await ranked(mode, q);
      const rank = keys.indexOf(q.key) + 1;
      if (rank >= 1 && rank <= 5) recall5++;
      if (rank >= 1) mrr += 1 / rank;
      if (misses === `${mode}:${half}` && (rank < 1 || rank > 5)) {
        const turns = conversations.find((c) => c.namespace === q.namespace)
          ?.turns ?? [];
        const text = (key: string) => turns.find((t) => t.key === key)?.value;
        console.log(`MISS ${q.text}\n  want ${text(q.key)}`);
        for (const key of keys.slice(0, 3)) console.log(`  got  ${text(key)}`);
      }
    }
    rows.push({
      half,
      mode,
      "R@5": (recall5 / asked.length).toFixed(3),
      "MRR@10": (mrr / asked.length).toFixed(3),
    });
  }
}
const count = (half: string) => questions.filter((q) => q.half === half).length;
console.log(
  `\nDialogue recall, LoCoMo-like set: ${count("tuning")} tuning + ${
    count("held-out")
  } held-out questions over ${
    conversations.reduce((n, c) => n + c.turns.length, 0)
  } turns in ${conversations.length} conversations (seed ${REAL_SEED})`,
);
console.table(rows);

let i = 0;
Deno.bench({
  name: "hybrid (MemoryService.search)",
  group: "dialogue search, LoCoMo-like",
  n: 300,
  warmup: 30,
  fn: async () => {
    await ranked("hybrid", questions[i++ % questions.length]);
  },
});

globalThis.addEventListener("unload", () => {
  void memory.stop();
  void backend.close();
});
