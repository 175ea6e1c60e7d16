// Another agentd's memory server as the hosted store: its /mcp/memory over
// MCP streamable HTTP, with a JWT as bearer token. The central daemon binds
// the JWT to one agent, so this backend reaches that agent's namespace (and
// its conversations) only; the central daemon embeds, ranks and encrypts at
// rest on its own side.

import { z } from "zod";
import { messageOf } from "../../../platform/errors.ts";
import type { Logger } from "../../../platform/log.ts";
import {
  Client,
  ErrorCode,
  McpError,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { publicUrl } from "../../../platform/log.ts";
import { sseSafeFetch } from "../../kit/transport/sse_fetch.ts";
import type {
  BackendHealth,
  EntryPage,
  Message,
  RankedKey,
  Rankings,
  SearchQuery,
  StoredEntry,
} from "../model.ts";
import { openEntry, sealEntry } from "../service_access.ts";
// The central server answers with its tools' output shapes.
import { EntryOut, MessageOut } from "../schemas.ts";
import {
  BackendUnavailable,
  EntryNotFound,
  type ListQuery,
  type MemoryBackend,
} from "./port.ts";

/** The central server's own bounds (list_memories, search_memory). */
const LIST_MAX = 200;
const SEARCH_MAX = 50;
const REQUEST_TIMEOUT_MS = 10_000;
const NOT_FOUND = /No entry "/;
/** HTTP answers that mean "not reachable right now" (or the JWT was refused), not "this write is wrong". */
const UNAVAILABLE_STATUS = new Set([401, 403, 404, 408, 429]);

const ListResult = z.object({
  entries: z.array(EntryOut),
  next_cursor: z.string().nullable(),
});
const SearchResult = z.object({
  hits: z.array(z.object({
    key: z.string(),
    score: z.number(),
    matched: z.array(z.string()),
  })),
});
const StoreResult = z.object({ replaced: z.boolean() });
const ConversationResult = z.object({ total: z.number() });
const HistoryResult = z.object({ messages: z.array(MessageOut) });
const ContextResult = z.object({
  conversations: z.array(z.object({ session_id: z.string() })),
});

type Answer =
  | { ok: true; data: Record<string, unknown> }
  | { ok: false; text: string };

export interface McpConnectOptions {
  /** The central daemon's memory endpoint, e.g. https://memory.internal/mcp/memory. */
  url: string;
  /** The JWT sent as bearer token. */
  token?: string;
  /** Re-seals sensitive values locally: the central daemon gets them in clear over the connection and encrypts them at rest with its own key. */
  dataKey: CryptoKey;
  log: Logger;
}

export class McpBackend implements MemoryBackend {
  readonly kind = "agentd";
  readonly #options: McpConnectOptions;
  readonly #where: string;
  #client: Promise<Client> | null = null;
  #closed = false;

  private constructor(options: McpConnectOptions) {
    this.#options = options;
    this.#where = publicUrl(options.url);
  }

  /** Connects (initialize), so a wrong URL or a refused JWT shows at start. */
  static async connect(options: McpConnectOptions): Promise<McpBackend> {
    if (options.token !== undefined) options.log.addSecret(options.token);
    const backend = new McpBackend(options);
    await backend.#session();
    return backend;
  }

  async get(namespace: string, key: string): Promise<StoredEntry | null> {
    const answer = await this.#call("retrieve_memory", { namespace, key });
    if (!answer.ok) {
      if (NOT_FOUND.test(answer.text)) return null;
      throw new Error(answer.text);
    }
    return await this.#stored(EntryOut.parse(answer.data));
  }

  async put(
    entry: StoredEntry,
    mode: "upsert" | "update",
  ): Promise<StoredEntry | null> {
    const value = (await openEntry(this.#options.dataKey, entry)).value;
    if (mode === "update") {
      const answer = await this.#call("update_memory", {
        namespace: entry.namespace,
        key: entry.key,
        value,
      });
      if (!answer.ok) {
        if (NOT_FOUND.test(answer.text)) {
          throw new EntryNotFound(entry.namespace, entry.key);
        }
        throw new Error(answer.text);
      }
      return entry;
    }
    const stored = this.#ok(
      await this.#call("store_memory", {
        namespace: entry.namespace,
        key: entry.key,
        value,
        tags: entry.tags,
      }),
    );
    // store_memory says whether it replaced an entry, not which: callers only
    // ask whether there was one, so the new entry stands for it.
    return StoreResult.parse(stored).replaced ? entry : null;
  }

  async delete(namespace: string, key: string): Promise<boolean> {
    const answer = await this.#call("delete_memory", { namespace, key });
    if (answer.ok) return true;
    if (NOT_FOUND.test(answer.text)) return false;
    throw new Error(answer.text);
  }

  async list(namespace: string, query: ListQuery): Promise<EntryPage> {
    const page = ListResult.parse(this.#ok(
      await this.#call("list_memories", {
        namespace,
        limit: Math.min(query.limit, LIST_MAX),
        ...(query.tags ? { tags: query.tags } : {}),
        ...(query.cursor ? { cursor: query.cursor } : {}),
      }),
    ));
    const entries: StoredEntry[] = [];
    for (const listed of page.entries) {
      // Lists cut long values; the whole entry is what gets cached.
      const entry = listed.value_truncated === undefined
        ? await this.#stored(listed)
        : await this.get(namespace, listed.key);
      if (entry) entries.push(entry);
    }
    return { entries, cursor: page.next_cursor };
  }

  /** Counts live on the central daemon (its /health); none are reported here. */
  countByNamespace(): Promise<Record<string, number>> {
    return Promise.resolve({});
  }

  async search(namespace: string, query: SearchQuery): Promise<Rankings> {
    const found = SearchResult.parse(this.#ok(
      await this.#call("search_memory", {
        namespace,
        query: query.text,
        limit: Math.min(Math.max(query.limit, 1), SEARCH_MAX),
      }),
    ));
    const ranked = (kind: string): RankedKey[] =>
      found.hits.filter((hit) => hit.matched.includes(kind))
        .map((hit) => ({ key: hit.key, score: hit.score }));
    return { lexical: ranked("lexical"), vector: ranked("vector") };
  }

  /** The central daemon embeds its entries itself. */
  staleEmbeddings(): Promise<StoredEntry[]> {
    return Promise.resolve([]);
  }

  /** The central daemon embeds its entries itself. */
  setEmbedding(): Promise<void> {
    return Promise.resolve();
  }

  /** Conversations belong to the JWT's agent on the central daemon, whatever the local namespace. */
  async appendMessages(
    _namespace: string,
    sessionId: string,
    messages: Message[],
  ): Promise<number> {
    const stored = this.#ok(
      await this.#call("store_conversation", {
        session_id: sessionId,
        messages: messages.map((message) => ({
          ...message.extra,
          role: message.role,
          content: message.content,
        })),
      }),
    );
    return ConversationResult.parse(stored).total;
  }

  async history(
    _namespace: string,
    sessionId: string,
    limit: number,
  ): Promise<Message[]> {
    const found = HistoryResult.parse(this.#ok(
      await this.#call("get_conversation_history", {
        session_id: sessionId,
        limit: Math.min(Math.max(limit, 1), 1000),
      }),
    ));
    return found.messages;
  }

  async sessions(namespace: string): Promise<string[]> {
    const context = ContextResult.parse(this.#ok(
      await this.#call("get_agent_context", { agent_name: namespace }),
    ));
    return context.conversations.map((c) => c.session_id);
  }

  async health(): Promise<BackendHealth> {
    try {
      const client = await this.#session();
      await client.ping({ timeout: REQUEST_TIMEOUT_MS });
      return { status: "ok", detail: `central memory at ${this.#where}` };
    } catch (error) {
      this.#drop();
      return { status: "down", detail: this.#unavailable(error).message };
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = await this.#client?.catch(() => null);
    this.#client = null;
    await client?.close().catch(() => {});
  }

  /** One tool call; transport failures become BackendUnavailable. */
  async #call(name: string, args: Record<string, unknown>): Promise<Answer> {
    let result;
    try {
      const client = await this.#session();
      result = await client.callTool({ name, arguments: args }, undefined, {
        timeout: REQUEST_TIMEOUT_MS,
      });
    } catch (error) {
      if (error instanceof BackendUnavailable) throw error;
      if (isRefusal(error)) throw error;
      this.#drop();
      throw this.#unavailable(error);
    }
    if (result.isError === true) {
      const text = Array.isArray(result.content)
        ? result.content.map((block) => block.type === "text" ? block.text : "")
          .join(" ")
        : "";
      return { ok: false, text: `Central memory: ${text}` };
    }
    const data = result.structuredContent;
    return data && typeof data === "object" && !Array.isArray(data)
      ? { ok: true, data: { ...data } }
      : { ok: false, text: `Central memory: ${name} returned no data` };
  }

  #ok(answer: Answer): Record<string, unknown> {
    if (!answer.ok) throw new Error(answer.text);
    return answer.data;
  }

  /** The connected client, connecting (again) when there is none. */
  #session(): Promise<Client> {
    if (this.#closed) {
      return Promise.reject(new BackendUnavailable("closed"));
    }
    this.#client ??= this.#open().catch((error: unknown) => {
      this.#client = null;
      throw this.#unavailable(error);
    });
    return this.#client;
  }

  async #open(): Promise<Client> {
    const headers: Record<string, string> = this.#options.token === undefined
      ? {}
      : { authorization: `Bearer ${this.#options.token}` };
    const transport = new StreamableHTTPClientTransport(
      new URL(this.#options.url),
      { requestInit: { headers }, fetch: sseSafeFetch },
    );
    const client = new Client({ name: "agentd-memory", version: "1.0.0" });
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    return client;
  }

  /** Forgets the session so the next call opens a new one (the central daemon may have restarted). */
  #drop(): void {
    const client = this.#client;
    this.#client = null;
    client?.then((c) => c.close()).catch(() => {});
  }

  #unavailable(error: unknown): BackendUnavailable {
    if (error instanceof BackendUnavailable) return error;
    const status = statusOf(error);
    const why = status === 401
      ? "the central daemon refused the JWT (401: invalid or expired)"
      : messageOf(error);
    return new BackendUnavailable(
      `Cannot reach the central memory at ${this.#where}: ${why}`,
    );
  }

  /** A central entry as this daemon stores it: sensitive values sealed with the local key. */
  async #stored(json: z.infer<typeof EntryOut>): Promise<StoredEntry> {
    const entry = {
      namespace: json.namespace,
      key: json.key,
      value: json.value,
      tags: json.tags,
      created_at: json.created_at,
      updated_at: json.updated_at,
    };
    return json.sensitive
      ? await sealEntry(this.#options.dataKey, entry)
      : { ...entry, sensitive: false, embedding: null };
  }
}

/** The HTTP status of a transport error (StreamableHTTPError carries it as `code`). */
function statusOf(error: unknown): number | undefined {
  if (!(error instanceof Error) || error instanceof McpError) return undefined;
  const code = "code" in error ? error.code : undefined;
  return typeof code === "number" && code >= 100 && code < 600
    ? code
    : undefined;
}

/** The central daemon answered and refused the request itself: retrying cannot help. */
function isRefusal(error: unknown): boolean {
  if (error instanceof McpError) {
    return error.code !== ErrorCode.RequestTimeout &&
      error.code !== ErrorCode.ConnectionClosed;
  }
  const status = statusOf(error);
  return status !== undefined && status >= 400 && status < 500 &&
    !UNAVAILABLE_STATUS.has(status);
}
