// KvBackend's conversations: sessions and their messages in the Store (the
// ["s", …] and ["m", …] rows of the layout in kv_records.ts).

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

const MessageRecord = z.object({
  role: z.string(),
  content: z.string(),
  at: z.string(),
  extra: z.record(z.string(), z.json()).optional(),
});
const SessionRecord = z.object({ count: z.number().int().nonnegative() });

export class KvConversations {
  #store: Store;
  #writes: GroupCommit;

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
            mutations: [
              {
                type: "set",
                key: sessionKey,
                value: { count: start + batch.length },
              },
              ...batch.map((value, j): Mutation => ({
                type: "set",
                key: ["m", namespace, sessionId, sequence(start + j)],
                value,
              })),
            ],
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
      newestFirst.push(...page.entries.map((r) => decodeMessage(r.value)));
      if (page.cursor === null) break;
      cursor = page.cursor;
    }
    return newestFirst.reverse();
  }

  async sessions(namespace: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const record of listAll(this.#store, ["s", namespace])) {
      if (typeof record.key[2] === "string") ids.push(record.key[2]);
    }
    return ids;
  }
}

function sessionCount(value: JsonValue | null): number {
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
    record.extra = z.record(z.string(), z.json()).parse(
      JSON.parse(JSON.stringify(message.extra)),
    );
  }
  return record;
}

function decodeMessage(value: JsonValue): Message {
  const parsed = MessageRecord.safeParse(value);
  if (!parsed.success) {
    throw new Error(
      `A stored conversation message is unreadable (${
        parsed.error.issues[0]?.message
      })`,
    );
  }
  return parsed.data;
}
