// The three searches the dialogue benches compare over the same chat turns:
// plain BM25 (the baseline), the memory server's lexical ranking
// (`KvBackend.search`) and what `search_memory` returns (hybrid), each
// turn stored one per entry as an agent keeps a conversation.

import { openKvStore } from "../platform/store/kv.ts";
import { KvBackend } from "../tools/memory/backends/kv.ts";
import { queryTerms } from "../tools/memory/search_index.ts";
import { respelled } from "../tools/memory/search_respell.ts";
import { memoryService } from "./bench_lib.ts";
import { plainBm25 } from "./plain_bm25.ts";

export type Mode = "plain BM25" | "lexical" | "hybrid";
export const MODES: Mode[] = ["plain BM25", "lexical", "hybrid"];

export interface DialogueSearch {
  /** The 10 best turn keys for `text` in `namespace`. */
  ranked(mode: Mode, namespace: string, text: string): Promise<string[]>;
  close(): void;
}

/** Stores every conversation's turns in a fresh in-memory store. */
export async function dialogueSearch(
  conversations: readonly {
    namespace: string;
    turns: readonly { key: string; value: string }[];
  }[],
): Promise<DialogueSearch> {
  const backend = await KvBackend.open(await openKvStore(":memory:"));
  const memory = await memoryService(backend);
  const caller = {};
  const plain = new Map<string, (query: string) => string[]>();
  for (const { namespace, turns } of conversations) {
    plain.set(namespace, plainBm25(turns));
    for (const turn of turns) {
      await memory.store(caller, {
        namespace,
        key: turn.key,
        value: turn.value,
      });
    }
  }
  return {
    async ranked(mode, namespace, text) {
      if (mode === "plain BM25") return plain.get(namespace)?.(text) ?? [];
      if (mode === "hybrid") {
        const { hits } = await memory.search(caller, namespace, text, 10);
        return hits.map((h) => h.key);
      }
      const rankings = await backend.search(namespace, {
        text,
        terms: queryTerms(text),
        respell: (df) => respelled(text, df),
        limit: 10,
      });
      return rankings.lexical.map((hit) => hit.key);
    },
    close() {
      void memory.stop();
      void backend.close();
    },
  };
}

/**
 * Recall@5 and MRR@10 of each question's evidence turn under `mode`;
 * `onMiss` sees the keys of each question whose turn is not in the top 5.
 */
export async function recallOf<
  Q extends { namespace: string; text: string; key: string },
>(
  search: DialogueSearch,
  mode: Mode,
  asked: readonly Q[],
  onMiss?: (q: Q, keys: string[]) => void,
): Promise<{ "R@5": string; "MRR@10": string }> {
  let recall5 = 0;
  let mrr = 0;
  for (const q of asked) {
    const keys = await search.ranked(mode, q.namespace, q.text);
    const rank = keys.indexOf(q.key) + 1;
    if (rank >= 1 && rank <= 5) recall5++;
    if (rank >= 1) mrr += 1 / rank;
    if (rank < 1 || rank > 5) onMiss?.(q, keys);
  }
  return {
    "R@5": (recall5 / asked.length).toFixed(3),
    "MRR@10": (mrr / asked.length).toFixed(3),
  };
}
