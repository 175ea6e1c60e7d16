// An agent's conversations. Kept by the memory server (store_conversation /
// get_conversation_history through the gateway, bound to the agent, so they
// live in the agent's own namespace and the agent's tools see them); when the
// gateway has no memory server, kept in the agents store instead.

import type { JsonValue, Store } from "../platform/store/mod.ts";
import type { ToolGateway } from "./gateway_link.ts";
import type { IdSource } from "./ids.ts";
import type { ModelTool } from "./model.ts";

export interface ConversationMessage {
  role: "user" | "assistant";
  content: string;
  /** Kept beside the message (stop_reason, tool names, sender). */
  extra?: { [key: string]: JsonValue };
}

const STORE_TOOL = "memory__store_conversation";
const HISTORY_TOOL = "memory__get_conversation_history";

export class Conversations {
  /** Whether the last turn found its conversation kept by the memory server (the next one reads it while it lists). */
  lastKeptByMemory = false;

  constructor(
    private readonly options: {
      gateway: ToolGateway;
      store: Store;
      ids: IdSource;
    },
  ) {}

  /**
   * Where a turn keeps its conversation: by the memory server when `listed`
   * (the gateway's tools for the agent, listed once per turn; undefined when
   * the gateway is down or could not list) has both conversation tools.
   */
  static keptByMemory(listed: readonly ModelTool[] | undefined): boolean {
    return listed !== undefined &&
      listed.some((tool) => tool.name === HISTORY_TOOL) &&
      listed.some((tool) => tool.name === STORE_TOOL);
  }

  /** The latest `limit` user/assistant messages, oldest first. */
  async load(
    agent: string,
    session: string,
    limit: number,
    viaMemory: boolean,
  ): Promise<ConversationMessage[]> {
    if (limit === 0) return [];
    if (viaMemory) {
      const outcome = await this.options.gateway.callTool(
        agent,
        HISTORY_TOOL,
        { session_id: session, limit },
        {},
      );
      if (outcome.isError) {
        throw new Error(`Cannot read the conversation: ${outcome.text}`);
      }
      // The tool's structured result holds the same messages as its text, unparsed.
      const listed = typeof outcome.structured === "object" &&
          outcome.structured !== null
        ? Reflect.get(outcome.structured, "messages")
        : undefined;
      return Array.isArray(listed)
        ? storedMessages(listed)
        : messagesOf(outcome.text);
    }
    const page = await this.options.store.list(
      ["conversation", agent, session],
      { limit, reverse: true },
    );
    return page.entries.map((entry) => storedMessage(entry.value))
      .filter((message) => message !== undefined).reverse();
  }

  async append(
    agent: string,
    session: string,
    messages: ConversationMessage[],
    viaMemory: boolean,
  ): Promise<void> {
    if (viaMemory) {
      const outcome = await this.options.gateway.callTool(
        agent,
        STORE_TOOL,
        {
          session_id: session,
          messages: messages.map((m) => ({
            ...m.extra,
            role: m.role,
            content: m.content,
          })),
        },
        {},
      );
      if (outcome.isError) {
        throw new Error(`Cannot store the conversation: ${outcome.text}`);
      }
      return;
    }
    await this.options.store.commit({
      mutations: messages.map((message) => ({
        type: "set",
        key: [
          "conversation",
          agent,
          session,
          this.options.ids.next("m"),
        ],
        value: {
          role: message.role,
          content: message.content,
          extra: message.extra ?? {},
        },
        newKey: true, // a fresh id: nothing to read first
      })),
    });
  }
}

/** The `messages` of a get_conversation_history result. */
function messagesOf(text: string): ConversationMessage[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`Unexpected conversation history: ${text.slice(0, 200)}`);
  }
  const list = typeof parsed === "object" && parsed !== null
    ? Reflect.get(parsed, "messages")
    : undefined;
  return Array.isArray(list) ? storedMessages(list) : [];
}

function storedMessages(list: unknown[]): ConversationMessage[] {
  return list.map(storedMessage).filter((message) => message !== undefined);
}

function storedMessage(value: unknown): ConversationMessage | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const role = Reflect.get(value, "role");
  const content = Reflect.get(value, "content");
  if (
    (role !== "user" && role !== "assistant") || typeof content !== "string"
  ) {
    return undefined;
  }
  return { role, content };
}
