// Retrieval quality of the memory server's search on a seeded, labelled set:
// recall@5 and MRR@10 for lexical only (BM25), vector only (the builtin
// embedder) and hybrid (both fused by RRF), computed by the server's own code.
//
// ~3,400 entries in one namespace: 2,500 filler notes (as in the search
// bench) plus the targets of 200 queries and their distractors, stored with
// MemoryService.store (normalised tags, builtin embeddings) on a KvBackend
// over an in-memory Deno KV. Four kinds of query, 50 each:
//   keyword     the query holds the target's two rare words (and one of its
//               other words); 4 distractors each hold one of the rare words
//   paraphrase  a person's 10 notes each use 4 words of a hand-written
//               synonym map; the query names the person and says 3 of the
//               target's words by their synonyms (car for automobile, ...).
//               The builtin embedder hashes words and letter trigrams: it
//               knows no synonyms, so this measures how far words alone go
//   updated     a fact ("The <attribute> of the <codename> <kind> is <v>")
//               is stored, then changed (half by update_memory, half by
//               store_memory on the same key); an older note still quotes the
//               old value. Half the facts have keys that name them
//               (`<codename>-<kind>-<attribute>`), half neutral keys. The
//               query asks for the attribute; the changed entry should rank
//               first, above the stale note, and show the new value
//   tag         4 near-identical notes per topic, told apart only by a
//               `client-<name>` tag; the query names the tag and the topic
// Lexical = KvBackend.search(...).lexical, vector = .vector (each the top 10),
// hybrid = MemoryService.search (what search_memory returns, limit 10).
//
//   deno bench -A bench/memory_quality_bench.ts

import { openKvStore } from "../platform/store/kv.ts";
import { KvBackend } from "../tools/memory/backends/kv.ts";
import { BuiltinEmbedder } from "../tools/memory/embedder_builtin.ts";
import { queryTerms, tokenize } from "../tools/memory/search_index.ts";
import { respelled } from "../tools/memory/search_respell.ts";
import {
  COMMON_WORDS,
  type EntryInput,
  int,
  madeUpWords,
  memoryService,
  paragraph,
  pick,
  seeded,
  VOCABULARY,
} from "./bench_lib.ts";

const SEED = 20261125;
const NS = "quality";
const FILLER = 2500;
const PER_KIND = 50;

type Kind = "keyword" | "paraphrase" | "updated" | "tag";
type Mode = "lexical" | "vector" | "hybrid";
const KINDS: Kind[] = ["keyword", "paraphrase", "updated", "tag"];
const MODES: Mode[] = ["lexical", "vector", "hybrid"];

interface Query {
  kind: Kind;
  text: string;
  /** The entry that answers it. */
  target: Draft;
  /** updated: the stale note that must not outrank the target, and the values. */
  stale?: Draft;
  oldValue?: string;
  newValue?: string;
}

/** An entry under construction; keys are assigned after shuffling. */
interface Draft {
  value: string;
  tags: string[];
  /** Set for entries whose key means something (facts); else `m-<n>`. */
  key?: string;
  /** A later value written to the same key (updated facts). */
  update?: { value: string; via: "update" | "store" };
}

/** Hand-written synonym map: the word in the note → the word in the query. */
const SYNONYMS: [string, string][] = [
  ["automobile", "car"],
  ["purchased", "bought"],
  ["physician", "doctor"],
  ["residence", "house"],
  ["commence", "start"],
  ["conclude", "finish"],
  ["assist", "help"],
  ["display", "show"],
  ["select", "choose"],
  ["journey", "trip"],
  ["inexpensive", "cheap"],
  ["occupation", "job"],
  ["supervisor", "boss"],
  ["salary", "pay"],
  ["ill", "sick"],
  ["medication", "medicine"],
  ["vacation", "holiday"],
  ["present", "gift"],
  ["telephone", "phone"],
  ["film", "movie"],
  ["sofa", "couch"],
  ["youngster", "kid"],
  ["wealthy", "rich"],
  ["intelligent", "smart"],
  ["difficult", "hard"],
  ["simple", "easy"],
  ["defect", "bug"],
  ["outage", "downtime"],
  ["notebook", "laptop"],
  ["supper", "dinner"],
  ["garbage", "trash"],
  ["shop", "store"],
  ["ocean", "sea"],
  ["pupil", "student"],
  ["baggage", "luggage"],
  ["photograph", "picture"],
  ["road", "street"],
  ["rapid", "fast"],
  ["enormous", "huge"],
  ["reply", "answer"],
  ["error", "mistake"],
  ["apartment", "flat"],
  ["repair", "fix"],
  ["remove", "delete"],
  ["large", "big"],
];
const KINDS_OF_SUBJECT = [
  "service",
  "cluster",
  "project",
  "team",
  "repository",
];
const ATTRIBUTES = [
  "owner",
  "deadline",
  "budget",
  "host",
  "version",
  "oncall",
  "region",
  "vendor",
];

// ------------------------------------------------------------ the data set

const random = seeded(SEED);
const rarePool = madeUpWords(3000, SEED, new Set(VOCABULARY));
let rareAt = 0;
/** A made-up word used nowhere else (names, codenames, rare terms, values). */
const fresh = () => rarePool[rareAt++];

function insertWords(text: string, words: string[]): string {
  const parts = text.split(" ");
  for (const word of words) {
    parts.splice(int(random, 1, parts.length - 1), 0, word);
  }
  return parts.join(" ");
}

/** A word of `text` (not a stopword, not in `except`), for queries. */
function contentWord(text: string, except: string[]): string {
  const words = text.toLowerCase().replace(/[^a-z ]/g, "").split(" ").filter(
    (w) => w.length >= 4 && tokenize(w).length > 0 && !except.includes(w),
  );
  return pick(random, words);
}

/** Fisher–Yates with the seeded generator; returns a shuffled copy. */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const drafts: Draft[] = [];
const queries: Query[] = [];
const add = (draft: Draft): Draft => {
  drafts.push(draft);
  return draft;
};

for (let i = 0; i < FILLER; i++) {
  const tags = new Set<string>();
  const count = int(random, 0, 2);
  while (tags.size < count) {
    tags.add(pick(random, ["work", "personal", "todo"]));
  }
  add({ value: paragraph(random), tags: [...tags] });
}

// keyword
for (let q = 0; q < PER_KIND; q++) {
  const [r1, r2] = [fresh(), fresh()];
  const target = add({
    value: insertWords(paragraph(random, 20, 40), [r1, r2]),
    tags: [],
  });
  for (const word of [r1, r1, r2, r2]) {
    add({ value: insertWords(paragraph(random, 20, 40), [word]), tags: [] });
  }
  queries.push({
    kind: "keyword",
    text: `${r1} ${r2} ${contentWord(target.value, [r1, r2])}`,
    target,
  });
}

// paraphrase
const people = Array.from({ length: PER_KIND / 2 }, fresh);
for (const person of people) {
  const notes: { draft: Draft; pairs: [string, string][] }[] = [];
  for (let n = 0; n < 10; n++) {
    const pairs = new Set<[string, string]>();
    while (pairs.size < 4) pairs.add(pick(random, SYNONYMS));
    const chosen = [...pairs];
    const name = person[0].toUpperCase() + person.slice(1);
    const draft = add({
      value: `${name}: ${
        insertWords(paragraph(random, 12, 24), chosen.map(([w]) => w))
      }`,
      tags: ["personal"],
    });
    notes.push({ draft, pairs: chosen });
  }
  for (const { draft, pairs } of notes.slice(0, 2)) {
    const said = shuffled(pairs).slice(0, 3);
    queries.push({
      kind: "paraphrase",
      text: `${person} ${said.map(([, synonym]) => synonym).join(" ")}`,
      target: draft,
    });
  }
}

// updated
for (let s = 0; s < PER_KIND / 2; s++) {
  const codename = fresh();
  const kind = pick(random, KINDS_OF_SUBJECT);
  const attributes = shuffled(ATTRIBUTES).slice(0, 6);
  for (const [a, attribute] of attributes.entries()) {
    const fact = (value: string) =>
      `The ${attribute} of the ${codename} ${kind} is ${value}. ${
        paragraph(random, 6, 12)
      }`;
    const oldValue = fresh();
    const draft = add({
      // Half the subjects have keys that name the fact; the others `m-<n>`.
      key: s % 2 === 0 ? `${codename}-${kind}-${attribute}` : undefined,
      value: fact(oldValue),
      tags: ["work"],
    });
    if (a >= 2) continue;
    const newValue = fresh();
    draft.update = { value: fact(newValue), via: a === 0 ? "update" : "store" };
    const stale = add({
      value:
        `Reminder from the weekly sync: the ${codename} ${kind} ${attribute} is ${oldValue} for now. ${
          paragraph(random, 10, 20)
        }`,
      tags: ["meeting-notes"],
    });
    queries.push({
      kind: "updated",
      text: `${attribute} of the ${codename} ${kind}`,
      target: draft,
      stale,
      oldValue,
      newValue,
    });
  }
}

// tag
const clients = Array.from({ length: 12 }, fresh);
for (let g = 0; g < PER_KIND; g++) {
  const topic = Array.from(
    { length: 3 },
    () => COMMON_WORDS[int(random, 40, COMMON_WORDS.length - 1)],
  );
  const tagged = shuffled(clients).slice(0, 4);
  const group = tagged.map((client) =>
    add({
      value: insertWords(paragraph(random, 14, 24), topic),
      tags: [`client-${client}`, "work"],
    })
  );
  const t = int(random, 0, 3);
  queries.push({
    kind: "tag",
    text: `client-${tagged[t]} ${topic.slice(0, 2).join(" ")}`,
    target: group[t],
  });
}

// Shuffle, then give the keys: a key says nothing about an entry's role.
const order = shuffled(drafts);
const keyOf = new Map<Draft, string>();
order.forEach((draft, i) => keyOf.set(draft, draft.key ?? `m-${i}`));

// ------------------------------------------------------------ store it

const kv = await openKvStore(":memory:");
const backend = await KvBackend.open(kv);
const embedder = new BuiltinEmbedder();
const memory = await memoryService(backend, embedder);
const caller = {};
const loadStarted = performance.now();
for (const draft of order) {
  const entry: EntryInput = {
    namespace: NS,
    key: keyOf.get(draft) ?? "",
    value: draft.value,
    tags: draft.tags,
  };
  await memory.store(caller, entry);
}
for (const draft of order) {
  const key = keyOf.get(draft) ?? "";
  if (draft.update?.via === "update") {
    await memory.update(caller, NS, key, draft.update.value);
  } else if (draft.update?.via === "store") {
    await memory.store(caller, {
      namespace: NS,
      key,
      value: draft.update.value,
    });
  }
}
const loadMs = performance.now() - loadStarted;

// ------------------------------------------------------------ rank

async function ranked(mode: Mode, text: string): Promise<string[]> {
  if (mode === "hybrid") {
    return (await memory.search(caller, NS, text, 10)).hits.map((h) => h.key);
  }
  const [vector] = await embedder.embed([text]);
  const rankings = await backend.search(NS, {
    text,
    terms: mode === "lexical" ? queryTerms(text) : [],
    respell: mode === "lexical" ? (df) => respelled(text, df) : undefined,
    vector: mode === "vector" ? vector : undefined,
    embedder: mode === "vector" ? embedder.id : undefined,
    limit: 10,
  });
  return rankings[mode].map((hit) => hit.key);
}

interface Score {
  recall5: number;
  mrr: number;
  top1: number;
  staleAbove: number;
  n: number;
}

const scores = new Map<string, Score>();
const score = (kind: Kind | "all", mode: Mode): Score => {
  const id = `${kind}/${mode}`;
  let s = scores.get(id);
  if (!s) {
    s = { recall5: 0, mrr: 0, top1: 0, staleAbove: 0, n: 0 };
    scores.set(id, s);
  }
  return s;
};
/** Hybrid hits of updated-fact queries that show the old value, and targets showing the new one. */
let staleValuesShown = 0;
let currentValuesShown = 0;

for (const query of queries) {
  const target = keyOf.get(query.target) ?? "";
  for (const mode of MODES) {
    const keys = await ranked(mode, query.text);
    const rank = keys.indexOf(target) + 1;
    const staleRank = query.stale
      ? keys.indexOf(keyOf.get(query.stale) ?? "") + 1
      : 0;
    for (const s of [score(query.kind, mode), score("all", mode)]) {
      s.n++;
      if (rank >= 1 && rank <= 5) s.recall5++;
      if (rank >= 1) s.mrr += 1 / rank;
      if (rank === 1) s.top1++;
      if (staleRank > 0 && (rank === 0 || staleRank < rank)) s.staleAbove++;
    }
  }
  if (query.kind === "updated" && query.oldValue && query.newValue) {
    const { hits } = await memory.search(caller, NS, query.text, 10);
    const hit = hits.find((h) => h.key === target);
    if (hit?.value.includes(query.newValue)) currentValuesShown++;
    const oldValue = query.oldValue;
    staleValuesShown += hits.filter((h) =>
      h.key === target && h.value.includes(oldValue)
    ).length;
  }
}

const pct = (part: number, whole: number) =>
  whole ? `${(100 * part / whole).toFixed(0)}%` : "";
console.log(
  `\nMemory search quality: ${queries.length} queries over ${drafts.length} entries ` +
    `(seed ${SEED}; stored and updated in ${
      (loadMs / 1000).toFixed(1)
    } s in-process)`,
);
const rows: Record<string, string>[] = [];
for (const kind of [...KINDS, "all" as const]) {
  const row: Record<string, string> = { queries: kind };
  for (const mode of MODES) {
    const s = score(kind, mode);
    row[`${mode} R@5`] = (s.recall5 / s.n).toFixed(2);
    row[`${mode} MRR`] = (s.mrr / s.n).toFixed(2);
  }
  rows.push(row);
}
console.table(rows);
const updated = (mode: Mode) => score("updated", mode);
console.log(
  "\nUpdated facts: changed entry ranked first / stale note ranked above it or target missing",
);
console.table(MODES.map((mode) => ({
  mode,
  "ranked first": pct(updated(mode).top1, updated(mode).n),
  "stale note above": pct(updated(mode).staleAbove, updated(mode).n),
})));
console.log(
  `Hybrid hits of the changed entry showing the new value: ${currentValuesShown}/${PER_KIND}; ` +
    `showing the old value: ${staleValuesShown}`,
);

// ------------------------------------------------------------ Deno.bench

for (const mode of MODES) {
  let i = 0;
  Deno.bench({
    name: `${mode} (${
      mode === "hybrid" ? "MemoryService.search" : "KvBackend.search"
    })`,
    group: `in-process search, ${drafts.length} entries`,
    baseline: mode === "hybrid",
    n: 1000,
    warmup: 100,
    fn: async () => {
      await ranked(mode, queries[i++ % queries.length].text);
    },
  });
}

globalThis.addEventListener("unload", () => {
  void memory.stop();
  void backend.close();
});
