// The scenario every memory transport test runs: each of the tools,
// bad arguments, unicode, a 200 KB value, tags filters and paging.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import type { Daemon } from "../../helpers.ts";

/** An SDK client on a daemon's /mcp/memory, optionally with a bearer token. */
export async function connectMemory(
  daemon: Daemon,
  token?: string,
): Promise<{ client: Client; close(): Promise<void> }> {
  const headers: Record<string, string> = token
    ? { authorization: `Bearer ${token}` }
    : {};
  const transport = new StreamableHTTPClientTransport(
    new URL(`${daemon.url}/mcp/memory`),
    {
      requestInit: { headers },
    },
  );
  const client = new Client({ name: "memory-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** The memory server's /health details. */
export async function memoryHealth(
  daemon: Daemon,
): Promise<{ status: string; memory: Record<string, unknown> }> {
  const body = await (await fetch(`${daemon.url}/health`)).json();
  // The memory server's own status: other servers (desktop-control without a
  // display) may make the daemon's overall status degraded.
  const memory = body.servers.memory.details;
  return { status: memory.status, memory };
}

/** The seed's ten tools and their parameters, letter for letter, and import_memories. */
const SEED_TOOLS: Record<string, { required: string[]; optional: string[] }> = {
  store_memory: { required: ["namespace", "key", "value"], optional: ["tags"] },
  import_memories: { required: ["namespace", "entries"], optional: [] },
  retrieve_memory: { required: ["namespace", "key"], optional: [] },
  search_memory: { required: ["namespace", "query"], optional: ["limit"] },
  list_memories: {
    required: ["namespace"],
    optional: ["tags", "limit", "cursor"],
  },
  delete_memory: { required: ["namespace", "key"], optional: [] },
  update_memory: { required: ["namespace", "key", "value"], optional: [] },
  get_conversation_history: { required: ["session_id"], optional: ["limit"] },
  store_conversation: { required: ["session_id", "messages"], optional: [] },
  get_agent_context: { required: ["agent_name"], optional: [] },
  cross_reference: { required: ["query", "namespaces"], optional: ["limit"] },
};

export type Structured = Record<string, unknown>;

export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<Structured> {
  const result = await client.callTool({ name, arguments: args });
  assert.notEqual(
    result.isError,
    true,
    `${name} failed: ${JSON.stringify(result.content)}`,
  );
  const structured = result.structuredContent;
  assert.ok(
    structured && typeof structured === "object",
    `${name} returned no structured content`,
  );
  return { ...structured };
}

export async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(
    result.isError,
    true,
    `${name} should fail: ${JSON.stringify(result.content)}`,
  );
  return JSON.stringify(result.content);
}

/** The scenario both transports run. */
export async function exerciseAllTools(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name).toSorted(),
    Object.keys(SEED_TOOLS).toSorted(),
  );
  for (const tool of tools) {
    const seed = SEED_TOOLS[tool.name];
    assert.deepEqual(
      (tool.inputSchema.required ?? []).toSorted(),
      seed.required.toSorted(),
      tool.name,
    );
    assert.deepEqual(
      Object.keys(tool.inputSchema.properties ?? {}).toSorted(),
      [...seed.required, ...seed.optional].toSorted(),
      tool.name,
    );
  }

  // store, overwrite (says so), retrieve; unicode and a 200 KB value.
  const first = await call(client, "store_memory", {
    namespace: "notes",
    key: "greeting",
    value: "héllo wörld 👋 — 你好，世界",
    tags: ["lang", "intro"],
  });
  assert.equal(first.replaced, false);
  const second = await call(client, "store_memory", {
    namespace: "notes",
    key: "greeting",
    value: "hello again",
  });
  assert.equal(second.replaced, true);
  assert.match(String(second.message), /Replaced the previous value/);
  const big = "Ωmega ".repeat(34_000); // ~200 KB of UTF-8
  await call(client, "store_memory", {
    namespace: "notes",
    key: "big",
    value: big,
    tags: ["big"],
  });
  assert.equal(
    (await call(client, "retrieve_memory", { namespace: "notes", key: "big" }))
      .value,
    big,
  );
  const unicodeKey = "ключ/鍵 🔑";
  await call(client, "store_memory", {
    namespace: "notes",
    key: unicodeKey,
    value: "κλειδί",
    tags: ["lang"],
  });
  assert.equal(
    (await call(client, "retrieve_memory", {
      namespace: "notes",
      key: unicodeKey,
    })).value,
    "κλειδί",
  );

  // update: an existing key changes; a missing one is an error naming it.
  const updated = await call(client, "update_memory", {
    namespace: "notes",
    key: "greeting",
    value: "bonjour",
  });
  assert.deepEqual(
    (updated.entry as Structured).tags,
    ["lang", "intro"],
    "update keeps the tags",
  );
  assert.equal(
    (await call(client, "retrieve_memory", {
      namespace: "notes",
      key: "greeting",
    })).value,
    "bonjour",
  );
  assert.match(
    await callError(client, "update_memory", {
      namespace: "notes",
      key: "missing",
      value: "x",
    }),
    /No entry \\"missing\\" in namespace \\"notes\\"/,
  );

  // list: tags filter (all must match) and paging through every entry.
  for (let i = 0; i < 7; i++) {
    await call(client, "store_memory", {
      namespace: "pages",
      key: `k${i}`,
      value: `value ${i}`,
      tags: ["paged"],
    });
  }
  const tagged = await call(client, "list_memories", {
    namespace: "notes",
    tags: ["lang"],
  });
  assert.deepEqual(
    (tagged.entries as Structured[]).map((entry) => entry.key).toSorted(),
    ["greeting", unicodeKey].toSorted(),
  );
  const both = await call(client, "list_memories", {
    namespace: "notes",
    tags: ["lang", "intro"],
  });
  assert.deepEqual((both.entries as Structured[]).map((entry) => entry.key), [
    "greeting",
  ]);
  const seen: string[] = [];
  let cursor: unknown = undefined;
  do {
    const page: Structured = await call(client, "list_memories", {
      namespace: "pages",
      limit: 3,
      ...(typeof cursor === "string" ? { cursor } : {}),
    });
    const keys = (page.entries as Structured[]).map((entry) =>
      String(entry.key)
    );
    assert.ok(keys.length <= 3);
    seen.push(...keys);
    cursor = page.next_cursor;
  } while (typeof cursor === "string");
  assert.deepEqual(seen, ["k0", "k1", "k2", "k3", "k4", "k5", "k6"]);
  const bigListed = await call(client, "list_memories", {
    namespace: "notes",
    tags: ["big"],
  });
  assert.match(
    String((bigListed.entries as Structured[])[0].value_truncated),
    /more characters/,
  );

  // search and cross_reference.
  await call(client, "store_memory", {
    namespace: "facts",
    key: "pets",
    value: "Alice has a dog named Rex who loves running in the park",
  });
  await call(client, "store_memory", {
    namespace: "facts",
    key: "work",
    value: "Alice works as a nurse at night",
  });
  const found = await call(client, "search_memory", {
    namespace: "facts",
    query: "dog running",
    limit: 5,
  });
  assert.equal((found.hits as Structured[])[0].key, "pets");
  assert.equal(found.mode, "hybrid");
  const crossed = await call(client, "cross_reference", {
    query: "hello bonjour",
    namespaces: ["notes", "facts"],
  });
  const crossHits = crossed.hits as Structured[];
  assert.ok(crossHits.length > 0);
  assert.ok(
    crossHits.every((hit) =>
      hit.namespace === "notes" || hit.namespace === "facts"
    ),
  );
  assert.equal(crossHits[0].namespace, "notes");
  assert.deepEqual(Object.keys(crossed.by_namespace as Structured).toSorted(), [
    "facts",
    "notes",
  ]);

  // conversations: the latest `limit` messages, oldest first.
  await call(client, "store_conversation", {
    session_id: "chat-1",
    messages: [
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
    ],
  });
  const stored = await call(client, "store_conversation", {
    session_id: "chat-1",
    messages: [{ role: "user", content: "three 🌍" }, {
      role: "tool",
      content: "four",
      tool_call_id: "c1",
    }],
  });
  assert.equal(stored.total, 4);
  const history = await call(client, "get_conversation_history", {
    session_id: "chat-1",
    limit: 3,
  });
  const messages = history.messages as Structured[];
  assert.deepEqual(messages.map((message) => message.content), [
    "two",
    "three 🌍",
    "four",
  ]);
  assert.deepEqual(messages[2].extra, { tool_call_id: "c1" });
  // A plain string is a user message.
  await call(client, "store_conversation", {
    session_id: "chat-plain",
    messages: ["just words", { role: "assistant", content: "a reply" }],
  });
  const plain = (await call(client, "get_conversation_history", {
    session_id: "chat-plain",
  })).messages as Structured[];
  assert.deepEqual(plain.map((m) => [m.role, m.content]), [
    ["user", "just words"],
    ["assistant", "a reply"],
  ]);

  // agent context: everything in the agent's namespace.
  const context = await call(client, "get_agent_context", {
    agent_name: "facts",
  });
  assert.deepEqual(
    (context.entries as Structured[]).map((entry) => entry.key),
    ["pets", "work"],
  );

  // delete: gone afterwards; deleting again is an error.
  await call(client, "delete_memory", { namespace: "facts", key: "work" });
  assert.match(
    await callError(client, "retrieve_memory", {
      namespace: "facts",
      key: "work",
    }),
    /No entry/,
  );
  assert.match(
    await callError(client, "delete_memory", {
      namespace: "facts",
      key: "work",
    }),
    /No entry/,
  );

  // import: many entries in one call, each as store_memory; a key given
  // twice ends with its later value, and without tags keeps its tags.
  const imported = await call(client, "import_memories", {
    namespace: "imported",
    entries: [
      { key: "a", value: "first of the import", tags: ["batch"] },
      { key: "b", value: "second of the import" },
      { key: "a", value: "first, again" },
    ],
  });
  assert.deepEqual(
    [imported.stored, imported.replaced, imported.failed, imported.errors],
    [3, 1, 0, []],
  );
  const again = await call(client, "retrieve_memory", {
    namespace: "imported",
    key: "a",
  });
  assert.equal(again.value, "first, again");
  assert.deepEqual(again.tags, ["batch"]);

  // bad arguments: clear errors naming the field, nothing stored.
  assert.match(
    await callError(client, "store_memory", {
      namespace: "",
      key: "k",
      value: "v",
    }),
    /namespace/,
  );
  assert.match(
    await callError(client, "store_memory", { namespace: "n", key: "k" }),
    /value/,
  );
  assert.match(
    await callError(client, "store_memory", {
      namespace: "n",
      key: "k",
      value: 5,
    }),
    /value/,
  );
  assert.match(
    await callError(client, "store_memory", {
      namespace: "n",
      key: "k",
      value: "v",
      colour: "red",
    }),
    /colour/,
  );
  assert.match(
    await callError(client, "search_memory", {
      namespace: "n",
      query: "x",
      limit: 0,
    }),
    /limit/,
  );
  assert.match(
    await callError(client, "store_conversation", {
      session_id: "s",
      messages: [],
    }),
    /messages/,
  );
  assert.match(
    await callError(client, "store_conversation", {
      session_id: "s",
      messages: [{ content: "x" }],
    }),
    /role/,
  );
  assert.match(
    await callError(client, "store_conversation", {
      session_id: "s",
      messages: [5],
    }),
    /messages\.0: expected a string \(a user message\) or \{role, content\}/,
  );
  assert.match(
    await callError(client, "cross_reference", { query: "x", namespaces: [] }),
    /namespaces/,
  );
  assert.match(
    await callError(client, "retrieve_memory", { namespace: "n", key: "k" }),
    /No entry/,
  );
}
