// The durable write queue of HostedBackend, in a local Store:
//   ["queue", seq]  a write made while the hosted store was unreachable
//   ["dead", seq]   { op, error, at }: a write the hosted store refused
//   ["outage"]      { since }: survives restarts, so "since" stays true
// and the replay of one queued write against the recovered remote.

import { z } from "zod";
import type {
  JsonValue,
  Store,
  StoreKey,
} from "../../../platform/store/mod.ts";
import type { MemoryBackend } from "./port.ts";
import type { Message, StoredEntry } from "../model.ts";
import { MessageOut } from "../schemas.ts";

const EmbeddingJson = z
  .object({ embedder: z.string(), vector: z.array(z.number()) })
  .nullable();
const EntryJson = z.object({
  namespace: z.string(),
  key: z.string(),
  value: z.string(),
  tags: z.array(z.string()),
  sensitive: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  embedding: EmbeddingJson,
});
export const QueuedOp = z.discriminatedUnion("op", [
  z.object({
    op: z.literal("put"),
    mode: z.enum(["upsert", "update"]),
    entry: EntryJson,
  }),
  z.object({
    op: z.literal("delete"),
    namespace: z.string(),
    key: z.string(),
    /** When the delete was made: a remote entry updated later survives it. */
    at: z.string(),
  }),
  z.object({
    op: z.literal("append"),
    namespace: z.string(),
    session_id: z.string(),
    messages: z.array(MessageOut),
  }),
  z.object({
    op: z.literal("embedding"),
    namespace: z.string(),
    key: z.string(),
    updated_at: z.string(),
    embedding: EmbeddingJson,
  }),
]);
export type QueuedOp = z.infer<typeof QueuedOp>;
const OutageJson = z.object({ since: z.string() });

export interface QueueItem {
  key: StoreKey;
  raw: JsonValue;
  /** null: unreadable (corrupt or from an incompatible version). */
  op: QueuedOp | null;
  problem: string;
}

/** A reserved place in the queue: commit with the op, or cancel. */
export interface Slot {
  commit(op: QueuedOp): Promise<void>;
  cancel(): void;
}

export class WriteQueue {
  readonly #store: Store;
  #nextSeq = 1;
  /** Store writes run one after another in seq order, so readers see a prefix. */
  #tail: Promise<unknown> = Promise.resolve();
  queued = 0;
  dead = 0;

  private constructor(store: Store) {
    this.#store = store;
  }

  static async open(store: Store): Promise<WriteQueue> {
    const queue = new WriteQueue(store);
    queue.queued = await queue.#countAndTrack(["queue"]);
    queue.dead = await queue.#countAndTrack(["dead"]);
    return queue;
  }

  /**
   * Takes the next place at call time, so writes enter the queue in the
   * order they were made even when their cache writes finish out of order.
   */
  reserve(): Slot {
    const seq = this.#nextSeq++;
    const decided = Promise.withResolvers<QueuedOp | null>();
    const written = this.#tail.then(() => decided.promise).then((op) =>
      op ? this.#store.set(["queue", seq], toJson(op)) : null
    );
    this.#tail = written.catch(() => {});
    return {
      commit: async (op) => {
        decided.resolve(op);
        await written;
        this.queued++;
      },
      cancel: () => decided.resolve(null),
    };
  }

  /** Resolves once every reserved place is committed or cancelled. */
  settled(): Promise<unknown> {
    return this.#tail;
  }

  async page(limit: number): Promise<QueueItem[]> {
    const page = await this.#store.list(["queue"], { limit });
    return page.entries.map((item) => {
      const parsed = QueuedOp.safeParse(item.value);
      return {
        key: item.key,
        raw: item.value,
        op: parsed.success ? parsed.data : null,
        problem: parsed.success ? "" : parsed.error.message,
      };
    });
  }

  async remove(key: StoreKey): Promise<void> {
    await this.#store.delete(key);
    this.queued--;
  }

  /** Moves an item to the dead-letter list (one atomic commit); returns its dead key. */
  async deadLetter(item: QueueItem, error: string): Promise<StoreKey> {
    const dead = ["dead", item.key[1] ?? this.#nextSeq++];
    await this.#store.commit({
      mutations: [
        {
          type: "set",
          key: dead,
          value: { op: item.raw, error, at: new Date().toISOString() },
        },
        { type: "delete", key: item.key },
      ],
    });
    this.queued--;
    this.dead++;
    return dead;
  }

  async outageSince(): Promise<string | null> {
    const record = await this.#store.get(["outage"]);
    const parsed = record ? OutageJson.safeParse(record.value) : null;
    return parsed?.success ? parsed.data.since : null;
  }

  async setOutage(since: string | null): Promise<void> {
    if (since) await this.#store.set(["outage"], { since });
    else await this.#store.delete(["outage"]);
  }

  async close(): Promise<void> {
    await this.#tail;
    await this.#store.flush();
  }

  /** Counts the entries under a prefix and moves #nextSeq past their seqs. */
  async #countAndTrack(prefix: string[]): Promise<number> {
    let count = 0;
    let cursor: string | undefined;
    do {
      const page = await this.#store.list(prefix, { limit: 1000, cursor });
      for (const item of page.entries) {
        const seq = item.key[1];
        if (typeof seq === "number" && seq >= this.#nextSeq) {
          this.#nextSeq = seq + 1;
        }
        count++;
      }
      cursor = page.cursor ?? undefined;
    } while (cursor);
    return count;
  }
}

/**
 * Applies one queued write to the recovered remote. Every op is idempotent,
 * since a write may have reached the server before its reply was lost.
 * Returns false when a newer remote version made it moot (last writer wins
 * by updated_at); the cache then takes the remote's version.
 */
export async function replay(
  remote: MemoryBackend,
  cache: MemoryBackend,
  op: QueuedOp,
): Promise<boolean> {
  switch (op.op) {
    case "put": {
      const entry = storedEntry(op.entry);
      const current = await remote.get(entry.namespace, entry.key);
      if (current && newer(current.updated_at, entry.updated_at)) {
        await cache.put(current, "upsert");
        return false;
      }
      await remote.put(entry, op.mode);
      return true;
    }
    case "delete": {
      const current = await remote.get(op.namespace, op.key);
      if (!current) return true;
      if (newer(current.updated_at, op.at)) {
        await cache.put(current, "upsert");
        return false;
      }
      await remote.delete(op.namespace, op.key);
      return true;
    }
    case "append": {
      // Skip when the messages already sit in the remote's recent history.
      const recent = await remote.history(
        op.namespace,
        op.session_id,
        op.messages.length + 100,
      );
      if (containsRun(recent, op.messages)) return true;
      await remote.appendMessages(op.namespace, op.session_id, op.messages);
      return true;
    }
    case "embedding":
      // setEmbedding is itself conditional on updated_at.
      await remote.setEmbedding(
        op.namespace,
        op.key,
        op.updated_at,
        embedding(op.embedding),
      );
      return true;
  }
}

/** For logs: which op, namespace and entry (never the value). */
export function describeOp(
  op: QueuedOp | null,
): { op: string; namespace?: string; entry?: string } {
  if (!op) return { op: "unreadable" };
  switch (op.op) {
    case "put":
      return { op: op.op, namespace: op.entry.namespace, entry: op.entry.key };
    case "append":
      return {
        op: op.op,
        namespace: op.namespace,
        entry: `session:${op.session_id}`,
      };
    default:
      return { op: op.op, namespace: op.namespace, entry: op.key };
  }
}

export function putOp(entry: StoredEntry, mode: "upsert" | "update"): QueuedOp {
  return {
    op: "put",
    mode,
    entry: { ...entry, embedding: embeddingJson(entry.embedding) },
  };
}

export function embeddingJson(
  e: StoredEntry["embedding"],
): z.infer<typeof EmbeddingJson> {
  return e ? { embedder: e.embedder, vector: Array.from(e.vector) } : null;
}

function embedding(e: z.infer<typeof EmbeddingJson>): StoredEntry["embedding"] {
  return e
    ? { embedder: e.embedder, vector: Float32Array.from(e.vector) }
    : null;
}

function storedEntry(entry: z.infer<typeof EntryJson>): StoredEntry {
  return { ...entry, embedding: embedding(entry.embedding) };
}

function newer(a: string, b: string): boolean {
  return Date.parse(a) > Date.parse(b);
}

function containsRun(
  history: Message[],
  run: z.infer<typeof MessageOut>[],
): boolean {
  const same = (a: Message, b: z.infer<typeof MessageOut>) =>
    a.role === b.role && a.content === b.content &&
    Date.parse(a.at) === Date.parse(b.at);
  for (let start = 0; start + run.length <= history.length; start++) {
    if (run.every((m, i) => same(history[start + i], m))) return true;
  }
  return false;
}

/** Message extras are `unknown`; a JSON round trip plus z.json() proves them JSON. */
function toJson(op: QueuedOp): JsonValue {
  return z.json().parse(JSON.parse(JSON.stringify(op)));
}
