// KvBackend's conversations: sessions and their messages in the Store (the
// ["s", …] and ["m", …] rows of the layout in kv_records.ts).
//
// A turn reads a session's history, then appends to it. The history's newest
// message was committed with the session record, so it gives that record's
// count and version; the append then commits checked against that version
// with no read of its own. A wrong guess (another writer got there first)
// fails the check, and the append reads the record as before.

import { z } from "zod";
import {
  type JsonValue,
  MAX_LIST_LIMIT,
  type Mutation,
  type Store,
  type StoreKey,
} from "../../../platform/store.ts";
import type { GroupCommit } from "./kv_group_commit.ts";
import type { Message } from "../model.ts";
import { listAll } from "./kv_records.ts";

/** Messages per commit when appending (plus the session record). */
const MESSAGES_PER_COMMIT = 90;

const SessionRecord = z.object({ count: z.number().int().nonnegative() });

/** Sessions whose record this process last saw, kept for the next append. */
const KNOWN_SESSIONS = 1024;

/** A session record as last seen here: its count, and its version (null: absent). */
interface KnownSession {
  count: number;
  version: string | null;
}

export class KvConversations {
  #store: Store;
  #writes: GroupCommit;
  #known = new Map<string, KnownSession>();

  constructor(store: Store, writes: GroupCommit) {
    this.#store = store;
    this.#writes = writes;
  }

  /** Each chunk of messages rides the backend's group commit with the session counter. */
  async append(
    namespace: string,
    sessionId: string,
    messages: Message[],
  ): Promise<number> {
    const sessionKey: StoreKey = ["s", namespace, sessionId];
    const records = messages.map(encodeMessage);
    const id = knownId(namespace, sessionId);
    const known = this.#known.get(id);
    this.#known.delete(id);
    if (
      known && records.length > 0 && records.length <= MESSAGES_PER_COMMIT
    ) {
      const total = known.count + records.length;
      const committed = await this.#store.commit({
        checks: [{ key: sessionKey, version: known.version }],
        mutations: appendMutations(namespace, sessionId, known.count, records),
      });
      if (committed.ok) {
        this.#remember(id, { count: total, version: committed.version });
        return total;
      }
    }
    let total = records.length > 0
      ? 0
      : sessionCount((await this.#store.get(sessionKey))?.value ?? null);
    for (let i = 0; i < records.length; i += MESSAGES_PER_COMMIT) {
      const batch = records.slice(i, i + MESSAGES_PER_COMMIT);
      total = await this.#writes.write({
        reads: [sessionKey],
        plan: (view) => {
          const start = sessionCount(view.get(sessionKey));
          return {
            result: start + batch.length,
            mutations: appendMutations(namespace, sessionId, start, batch),
          };
        },
      });
    }
    return total;
  }

  async history(
    namespace: string,
    sessionId: string,
    limit: number,
  ): Promise<Message[]> {
    const newestFirst: Message[] = [];
    let cursor: string | undefined;
    while (newestFirst.length < limit) {
      const page = await this.#store.list(["m", namespace, sessionId], {
        reverse: true,
        limit: Math.min(MAX_LIST_LIMIT, limit - newestFirst.length),
        cursor,
      });
      if (cursor === undefined) {
        this.#remember(
          knownId(namespace, sessionId),
          knownFrom(page.entries[0]),
        );
      }
      newestFirst.push(...page.entries.map((r) => decodeMessage(r.value)));
      if (page.cursor === null) break;
      cursor = page.cursor;
    }
    return newestFirst.reverse();
  }

  #remember(id: string, known: KnownSession | undefined): void {
    this.#known.delete(id);
    if (known === undefined) return;
    this.#known.set(id, known);
    if (this.#known.size > KNOWN_SESSIONS) {
      const oldest = this.#known.keys().next();
      if (!oldest.done) this.#known.delete(oldest.value);
    }
  }

  async sessions(namespace: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const record of listAll(this.#store, ["s", namespace])) {
      if (typeof record.key[2] === "string") ids.push(record.key[2]);
    }
    return ids;
  }
}

function knownId(namespace: string, sessionId: string): string {
  return JSON.stringify([namespace, sessionId]);
}

/**
 * The session record as the newest message implies it: the commit that wrote
 * that message also set the record (one version per commit) to its sequence
 * + 1. No message: no record (version null).
 */
function knownFrom(
  newest: { key: StoreKey; version: string } | undefined,
): KnownSession | undefined {
  if (newest === undefined) return { count: 0, version: null };
  const seq = newest.key[3];
  if (typeof seq !== "string" || !/^\d{12}$/.test(seq)) return undefined;
  return { count: Number(seq) + 1, version: newest.version };
}

/** The session record at its new count and the messages from sequence `start`. */
function appendMutations(
  namespace: string,
  sessionId: string,
  start: number,
  records: readonly JsonValue[],
): Mutation[] {
  return [
    {
      type: "set",
      key: ["s", namespace, sessionId],
      value: { count: start + records.length },
    },
    // Sequences past the session's count were never written: nothing to read first.
    ...records.map((value, j): Mutation => ({
      type: "set",
      key: ["m", namespace, sessionId, sequence(start + j)],
      value,
      newKey: true,
    })),
  ];
}

function sessionCount(value: unknown): number {
  const parsed = SessionRecord.safeParse(value);
  return parsed.success ? parsed.data.count : 0;
}

/** Zero-padded so that string order is numeric order. */
function sequence(n: number): string {
  return String(n).padStart(12, "0");
}

function encodeMessage(message: Message): JsonValue {
  const record: { [key: string]: JsonValue } = {
    role: message.role,
    content: message.content,
    at: message.at,
  };
  if (message.extra !== undefined) {
    // JSON round trip: drops undefined and rejects what JSON cannot hold.
    const extra: JsonValue = JSON.parse(JSON.stringify(message.extra));
    if (!isJsonObject(extra)) {
      throw new Error("A message's extra fields must be a JSON object");
    }
    record.extra = extra;
  }
  return record;
}

/** Stored messages were written by encodeMessage: a shape check suffices (no zod per message). */
function decodeMessage(value: JsonValue): Message {
  if (isJsonObject(value)) {
    const { role, content, at, extra } = value;
    if (
      typeof role === "string" && typeof content === "string" &&
      typeof at === "string" && (extra === undefined || isJsonObject(extra))
    ) {
      const message: Message = { role, content, at };
      if (extra !== undefined) message.extra = extra;
      return message;
    }
  }
  throw new Error(
    "A stored conversation message is unreadable (expected {role, content, at} strings and an optional extra object)",
  );
}

function isJsonObject(
  value: JsonValue | undefined,
): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
