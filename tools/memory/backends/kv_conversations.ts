// KvBackend's conversations: sessions and their messages in the Store (the
// ["s", …] and ["m", …] rows of the layout in kv_records.ts).
//
// A turn reads a session's history, then appends to it. The history's newest
// message was committed with the session record, so it gives that record's
// count and version; the append then commits checked against that version
// with no read of its own. A wrong guess (another writer got there first)
// fails the check, and the append reads the record as before.
//
// The newest messages of the sessions read or written here stay in memory
// with the session record's version. Every append (here, in another daemon
// on the store, through any tool) sets that record in the commit that writes
// its messages, so a read of the record alone tells whether they are current:
// a history is one small get, not a list and decode of each message. No
// record: no messages (a new session is that one get too). Nor is that get
// made while every commit to the store since the record was last seen is
// this process's own through the store and none wrote the record
// (Store.unchangedBetween): a conversation that goes on in this daemon reads
// nothing from the store.

import { z } from "zod";
import {
  type JsonValue,
  MAX_LIST_LIMIT,
  type Mutation,
  type Store,
  type StoreKey,
} from "../../../platform/store/mod.ts";
import type { GroupCommit } from "./kv_group_commit.ts";
import type { Message } from "../model.ts";
import { listAll } from "./kv_records.ts";
import { keyUnchanged } from "../../../platform/store/version.ts";

/** Messages per commit when appending (plus the session record). */
const MESSAGES_PER_COMMIT = 90;

const SessionRecord = z.object({ count: z.number().int().nonnegative() });

/** Sessions whose record this process last saw, kept for the next append. */
const KNOWN_SESSIONS = 1024;

/** Messages kept per session at most (the newest), and their characters in all sessions. */
const KEPT_MESSAGES = 200;
const KEPT_CHARS = 4 * 1024 * 1024;
/** Counted per kept message besides its content (role, time, extra fields). */
const MESSAGE_OVERHEAD_CHARS = 256;

/** A session record as last seen here: its count, and its version (null: absent). */
interface KnownSession {
  count: number;
  version: string | null;
  /** The newest messages at that version, oldest first (all of them when as many as `count`). */
  messages?: readonly Message[];
  /** A change mark of the store at which `version` was the record's (none: unknown). */
  mark?: string;
  /** What `messages` count against KEPT_CHARS. */
  chars: number;
}

export class KvConversations {
  #store: Store;
  #writes: GroupCommit;
  #known = new Map<string, KnownSession>();
  #keptChars = 0;

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
    this.#forget(id);
    if (
      known && records.length > 0 && records.length <= MESSAGES_PER_COMMIT
    ) {
      const total = known.count + records.length;
      const committed = await this.#store.commit({
        checks: [{ key: sessionKey, version: known.version }],
        mutations: appendMutations(namespace, sessionId, known.count, records),
      });
      // The group commit's copy of the record is older now (if it has one).
      this.#writes.forget(sessionKey);
      if (committed.ok) {
        // The stored form of the new messages (extra as JSON), after those known.
        const added = known.messages && records.map(decodeMessage);
        this.#remember(id, {
          count: total,
          version: committed.version,
          messages: added && [...(known.messages ?? []), ...added],
          chars: added ? known.chars + charsOf(added) : 0,
          mark: committed.mark,
        });
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
    const id = knownId(namespace, sessionId);
    const known = this.#known.get(id);
    const sessionKey: StoreKey = ["s", namespace, sessionId];
    const kept = known?.messages;
    const enough = known !== undefined && kept !== undefined &&
      (kept.length >= limit || kept.length === known.count);
    // Read before the get below: what that get sees is current at least as of it.
    const mark = this.#store.changeMark?.();
    if (enough && keyUnchanged(this.#store, known.mark, mark, sessionKey)) {
      known.mark = mark;
      return this.#reuse(id, known, kept, limit);
    }
    // getMany, not get: the store then knows the record's version for the append's check.
    const [record] = await this.#store.getMany([sessionKey]);
    const version = record?.version ?? null;
    if (version === null) {
      this.#remember(id, {
        count: 0,
        version: null,
        messages: [],
        chars: 0,
        mark,
      });
      return [];
    }
    if (enough && version === known.version) {
      known.mark = mark;
      return this.#reuse(id, known, kept, limit);
    }
    const newestFirst: Message[] = [];
    let first: KnownSession | undefined;
    let cursor: string | undefined;
    while (newestFirst.length < limit) {
      const page = await this.#store.list(["m", namespace, sessionId], {
        reverse: true,
        limit: Math.min(MAX_LIST_LIMIT, limit - newestFirst.length),
        cursor,
      });
      if (cursor === undefined) first = knownFrom(page.entries[0]);
      newestFirst.push(...page.entries.map((r) => decodeMessage(r.value)));
      if (page.cursor === null) break;
      cursor = page.cursor;
    }
    const messages = newestFirst.reverse();
    // Messages are never changed once written: the later pages (older
    // messages) belong to the version of the first page's newest.
    this.#remember(
      id,
      first && { ...first, messages, chars: charsOf(messages), mark },
    );
    return messages;
  }

  /** The newest `limit` of the messages kept, the session now the most recently used. */
  #reuse(
    id: string,
    known: KnownSession,
    kept: readonly Message[],
    limit: number,
  ): Message[] {
    this.#known.delete(id);
    this.#known.set(id, known);
    return kept.slice(Math.max(0, kept.length - limit));
  }

  /** Keeps what is known of a session, as the most recently used; its messages within the bounds. */
  #remember(id: string, known: KnownSession | undefined): void {
    this.#forget(id);
    if (known === undefined) return;
    let { messages, chars } = known;
    if (messages !== undefined && messages.length > KEPT_MESSAGES) {
      const cut = messages.length - KEPT_MESSAGES;
      chars -= charsOf(messages.slice(0, cut));
      messages = messages.slice(cut);
    }
    // One long conversation may not push out every other.
    if (messages === undefined || chars > KEPT_CHARS / 4) {
      messages = undefined;
      chars = 0;
    }
    const entry: KnownSession = {
      count: known.count,
      version: known.version,
      messages,
      chars,
      mark: known.mark,
    };
    this.#known.set(id, entry);
    this.#keptChars += entry.chars;
    for (const [oldest, value] of this.#known) {
      if (
        this.#known.size <= KNOWN_SESSIONS && this.#keptChars <= KEPT_CHARS
      ) break;
      if (oldest === id) continue;
      this.#forget(oldest, value);
    }
  }

  #forget(id: string, known = this.#known.get(id)): void {
    if (known === undefined) return;
    this.#known.delete(id);
    this.#keptChars -= known.chars;
  }

  async sessions(namespace: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const record of listAll(this.#store, ["s", namespace])) {
      if (typeof record.key[2] === "string") ids.push(record.key[2]);
    }
    return ids;
  }
}

/** About what `messages` hold in memory, in characters. */
function charsOf(messages: readonly Message[]): number {
  let chars = 0;
  for (const message of messages) {
    chars += message.content.length + MESSAGE_OVERHEAD_CHARS;
    if (message.extra !== undefined) {
      chars += JSON.stringify(message.extra).length;
    }
  }
  return chars;
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
  if (newest === undefined) return { count: 0, version: null, chars: 0 };
  const seq = newest.key[3];
  if (typeof seq !== "string" || !/^\d{12}$/.test(seq)) return undefined;
  return { count: Number(seq) + 1, version: newest.version, chars: 0 };
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
