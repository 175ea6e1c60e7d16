// The journal of KvBackend's persisted indexes read back: at load, the rows
// to replay over the snapshots (and the vectors they hold); after a save, the
// rows it covers dropped. Apart from kv_index.ts, which decides when to load
// and save; the rows are written with each entry (journalMutation there).

import type { Store, StoreEntry } from "../../../platform/store/mod.ts";
import type { Embedding, StoredEntry } from "../model.ts";
import { decodeJournal, journalId } from "./entry_codec.ts";
import { BATCH } from "./kv_index_parts.ts";
import { listAll } from "./kv_records.ts";

/**
 * A journal row read back. `embedding` undefined: a row of format 2 (the id
 * only), whose vector is in the entry's JSON record.
 */
export interface Journaled {
  id: string;
  embedding?: Embedding | null;
}

function journaled(row: StoreEntry): Journaled | null {
  if (typeof row.value === "string") return { id: row.value };
  return row.bytes ? decodeJournal(row.bytes) : null;
}

/** A journal row's write id alone (its vector is not decoded). */
function journaledId(row: StoreEntry): string | null {
  if (typeof row.value === "string") return row.value;
  return row.bytes ? journalId(row.bytes) : null;
}

/** Every journal row in the store, per namespace, per key. */
export async function readJournals(
  store: Store,
): Promise<Map<string, Map<string, Journaled>>> {
  const journals = new Map<string, Map<string, Journaled>>();
  for await (const row of listAll(store, ["j"])) {
    const [, namespace, key] = row.key;
    const written = journaled(row);
    if (typeof namespace !== "string" || typeof key !== "string") continue;
    if (!written) continue;
    let journal = journals.get(namespace);
    if (!journal) journals.set(namespace, journal = new Map());
    journal.set(key, written);
  }
  return journals;
}

/** Deletes the captured journal rows still holding the captured write ids. */
export async function dropJournal(
  store: Store,
  namespace: string,
  captured: Map<string, string>,
): Promise<void> {
  const keys = [...captured.keys()];
  for (let i = 0; i < keys.length; i += BATCH) {
    const batch = keys.slice(i, i + BATCH);
    for (let attempt = 0; attempt < 5; attempt++) {
      const rows = await store.getMany(
        batch.map((key) => ["j", namespace, key]),
      );
      const done = rows.flatMap((row, j) =>
        row && journaledId(row) === captured.get(batch[j]) ? [row] : []
      );
      if (done.length === 0) break;
      const result = await store.commit({
        checks: done.map((row) => ({ key: row.key, version: row.version })),
        mutations: done.map((row) => ({ type: "delete", key: row.key })),
      });
      // Lost a race with a new write of one of these keys: read again.
      if (result.ok) break;
    }
  }
}

/** The entry with the vector its journal row holds (a row of format 2: the record's own). */
export function withVector(
  entry: StoredEntry,
  written: Journaled,
): StoredEntry {
  if (written.embedding === undefined || entry.sensitive) return entry;
  return { ...entry, embedding: written.embedding };
}
