// Conversation tools, and the whole context of an agent.

import { z } from "zod";
import { json, toolDefiner } from "../kit/mod.ts";
import {
  entryJson,
  EntryOut,
  messageJson,
  MessageOut,
  namespace,
  sessionId,
} from "./schemas.ts";
import type { MemoryService } from "./service.ts";

const tool = toolDefiner<MemoryService>();

const MAX_CONTENT = 1024 * 1024;

const message = z.union([
  z.string().max(MAX_CONTENT).describe("A user message's text"),
  z.looseObject({
    role: z.string().min(1).max(64).describe(
      "user, assistant, system, tool, ...",
    ),
    content: z.string().max(MAX_CONTENT).describe("The message text"),
  }),
], {
  // An object names what it lacks; anything else is told both shapes.
  error: (issue) => {
    if (
      issue.code === "invalid_union" && typeof issue.input === "object" &&
      issue.input !== null && !Array.isArray(issue.input)
    ) {
      const inner = issue.errors[1] ?? [];
      return inner.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    }
    return "expected a string (a user message) or {role, content}";
  },
});

export const storeConversation = tool({
  name: "store_conversation",
  title: "Store conversation",
  touches: [],
  description:
    "Append messages to a conversation (by session_id). Each message is {role, content, ...} (other fields are kept) or a plain string (a user message).",
  input: z.object({
    session_id: sessionId,
    messages: z.array(message).min(1).max(1000).describe(
      "Messages in order: {role, content, ...} or a string (role user)",
    ),
  }),
  output: z.object({
    session_id: z.string(),
    stored: z.number().int(),
    total: z.number().int(),
  }),
  annotations: { destructiveHint: false },
  async handle(memory, args, call) {
    const messages = args.messages.map((message) => {
      if (typeof message === "string") {
        return { role: "user", content: message, extra: {} };
      }
      const { role, content, ...extra } = message;
      return { role, content, extra };
    });
    return json(
      await memory.storeConversation(call.caller, args.session_id, messages),
    );
  },
});

export const getConversationHistory = tool({
  name: "get_conversation_history",
  title: "Conversation history",
  touches: [],
  description: "The latest messages of a conversation, oldest first.",
  input: z.object({
    session_id: sessionId,
    limit: z.number().int().min(1).max(1000).optional().describe(
      "How many of the latest messages (default 50)",
    ),
  }),
  output: z.object({
    session_id: z.string(),
    count: z.number().int(),
    messages: z.array(MessageOut),
  }),
  annotations: { readOnlyHint: true },
  async handle(memory, args, call) {
    const messages = await memory.history(
      call.caller,
      args.session_id,
      args.limit ?? 50,
    );
    return json({
      session_id: args.session_id,
      count: messages.length,
      messages: messages.map(messageJson),
    });
  },
});

export const getAgentContext = tool({
  name: "get_agent_context",
  title: "Agent context",
  touches: [],
  description:
    "Everything stored for an agent: the entries of its namespace and its conversations (bounded; page with list_memories for more).",
  input: z.object({
    agent_name: namespace.describe("The agent's name (its namespace)"),
  }),
  output: z.object({
    agent: z.string(),
    entries: z.array(EntryOut),
    more_entries: z.boolean(),
    conversations: z.array(z.object({
      session_id: z.string(),
      messages: z.array(MessageOut),
    })),
    more_conversations: z.boolean(),
  }),
  annotations: { readOnlyHint: true },
  async handle(memory, args, call) {
    const context = await memory.agentContext(call.caller, args.agent_name, {
      entries: 200,
      sessions: 20,
      messages: 50,
    });
    return json({
      agent: context.agent,
      entries: context.entries.map((entry) => entryJson(entry, 1000)),
      more_entries: context.more_entries,
      conversations: context.conversations.map((conversation) => ({
        session_id: conversation.session_id,
        messages: conversation.messages.map(messageJson),
      })),
      more_conversations: context.more_conversations,
    });
  },
});
