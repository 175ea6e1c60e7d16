// Recall of the memory server's built-in search on the second, LoCoMo-like
// dialogue set (bench/memory_dialogue_real_set.ts): chat turns stored one per
// entry, questions whose evidence is one turn, recall@5 and MRR@10 of that
// turn, on the tuning half and the held-out half of the templates. Plain BM25
// is the same baseline as bench/memory_dialogue_bench.ts (lowercased
// alphanumeric words, no stop words, no stemming, k1 1.2, b 0.75); lexical
// is KvBackend.search with the query terms search_memory uses (queryTerms),
// hybrid is MemoryService.search. Tune on the tuning half only. Each question
// is asked as written and with one typing slip (bench/dialogue_typos.ts).
//
//   deno bench -A bench/memory_dialogue_real_bench.ts
//   BENCH_DIALOGUE_MISSES=hybrid:tuning[:slip] deno run -A bench/memory_dialogue_real_bench.ts

import {
  REAL_SEED,
  realDialogues,
  type RealQuestion,
} from "./memory_dialogue_real_set.ts";
import {
  dialogueSearch,
  type Mode,
  MODES,
  recallOf,
} from "./dialogue_search.ts";
import { withSlip } from "./dialogue_typos.ts";

const { conversations, questions } = realDialogues();

const search = await dialogueSearch(conversations);
const ranked = (mode: Mode, q: RealQuestion) =>
  search.ranked(mode, q.namespace, q.text);

const misses = Deno.env.get("BENCH_DIALOGUE_MISSES"); // e.g. "hybrid:tuning" prints what it missed
const rows = [];
for (const half of ["tuning", "held-out"] as const) {
  for (const slip of [false, true]) {
    const asked = questions.filter((q) => q.half === half).map((q) =>
      slip ? { ...q, text: withSlip(q.text, REAL_SEED) } : q
    );
    for (const mode of MODES) {
      const onMiss = misses === `${mode}:${half}${slip ? ":slip" : ""}`
        ? (q: RealQuestion, keys: string[]) => {
          const turns = conversations.find((c) => c.namespace === q.namespace)
            ?.turns ?? [];
          const text = (key: string) => turns.find((t) => t.key === key)?.value;
          console.log(`MISS ${q.text}\n  want ${text(q.key)}`);
          for (const key of keys.slice(0, 3)) {
            console.log(`  got  ${text(key)}`);
          }
        }
        : undefined;
      rows.push({
        half,
        questions: slip ? "one slip" : "as written",
        mode,
        ...await recallOf(search, mode, asked, onMiss),
      });
    }
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

globalThis.addEventListener("unload", () => search.close());
