// Conversation history for the memory service: kept per agent (unbound callers
// share SHARED_NAMESPACE), so one session id used by two agents names two conversations.

import type { Caller } from "../../platform/identity.ts";
import type { MemoryBackend } from "./backends/port.ts";
import type { Message } from "./model.ts";
import { conversationNamespace } from "./service_access.ts";
import type { MemoryStats } from "./stats.ts";

/** A message to store: `at` is the time it is stored. */
export type NewMessage = Omit<Message, "at">;

/** What storing messages did: how many were added, and the conversation's length now. */
export type StoredMessages = {
  session_id: string;
  stored: number;
  total: number;
};

export interface ConversationsOptions {
  backend: MemoryBackend;
  stats: MemoryStats;
  clock: () => number;
}

export class Conversations {
  readonly #backend: MemoryBackend;
  readonly #stats: MemoryStats;
  readonly #clock: () => number;

  constructor(options: ConversationsOptions) {
    this.#backend = options.backend;
    this.#stats = options.stats;
    this.#clock = options.clock;
  }

  async store(
    caller: Caller,
    sessionId: string,
    messages: readonly NewMessage[],
  ): Promise<StoredMessages> {
    const at = new Date(this.#clock()).toISOString();
    const stored: Message[] = messages.map((message) => {
      const out: Message = { role: message.role, content: message.content, at };
      if (message.extra && Object.keys(message.extra).length > 0) {
        out.extra = message.extra;
      }
      return out;
    });
    const total = await this.#stats.time(
      "conversation",
      () =>
        this.#backend.appendMessages(
          conversationNamespace(caller),
          sessionId,
          stored,
        ),
    );
    return { session_id: sessionId, stored: stored.length, total };
  }

  async history(
    caller: Caller,
    sessionId: string,
    limit: number,
  ): Promise<Message[]> {
    return await this.#stats.time(
      "history",
      () =>
        this.#backend.history(
          conversationNamespace(caller),
          sessionId,
          limit,
        ),
    );
  }

  /** The agent's conversations (the caller was already checked for it), bounded. */
  async ofAgent(
    agent: string,
    bounds: { sessions: number; messages: number },
  ): Promise<{
    conversations: { session_id: string; messages: Message[] }[];
    more: boolean;
  }> {
    const sessions = await this.#backend.sessions(agent);
    const conversations = await Promise.all(
      sessions.slice(0, bounds.sessions).map(async (session_id) => ({
        session_id,
        messages: await this.#backend.history(
          agent,
          session_id,
          bounds.messages,
        ),
      })),
    );
    return { conversations, more: sessions.length > bounds.sessions };
  }
}
