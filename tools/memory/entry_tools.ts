// Entry tools: store, retrieve, update, delete and list memories.

import { z } from "zod";
import { json, toolDefiner } from "../kit/mod.ts";
import { resourceLink } from "../kit/session_results.ts";
import {
  entryJson,
  entryMeta,
  EntryMetaOut,
  EntryOut,
  key,
  namespace,
  tags,
  value,
} from "./schemas.ts";
import type { MemoryService } from "./service.ts";

const tool = toolDefiner<MemoryService>();

/** Values in lists are cut to this many characters; retrieve_memory gives the whole value. */
const LIST_VALUE_CHARS = 1000;

export const storeMemory = tool({
  name: "store_memory",
  title: "Store memory",
  touches: [],
  description:
    "Store a value under a key in a namespace. Overwrites an existing key and says so (keeping its tags unless tags are given). Tag it 'sensitive' to encrypt it at rest.",
  input: z.object({ namespace, key, value, tags: tags.optional() }),
  output: z.object({
    stored: z.literal(true),
    replaced: z.boolean(),
    message: z.string(),
    entry: EntryMetaOut,
  }),
  annotations: { destructiveHint: false, idempotentHint: true },
  async handle(memory, args, call) {
    const { entry, replaced } = await memory.store(call.caller, args);
    return json({
      stored: true,
      replaced,
      message: replaced
        ? `Replaced the previous value of "${entry.key}" in "${entry.namespace}".`
        : `Stored "${entry.key}" in "${entry.namespace}".`,
      entry: entryMeta(entry),
    });
  },
});

/** Entries one import_memories call takes. */
const IMPORT_MAX = 10_000;
/** Failed entries an import names (the count covers all). */
const IMPORT_ERRORS_SHOWN = 100;

export const importMemories = tool({
  name: "import_memories",
  title: "Import memories",
  touches: [],
  taskSupport: "optional",
  description:
    `Store many entries (up to ${IMPORT_MAX}) in one namespace in one call, each as store_memory would (overwrites; omitted tags keep the entry's tags). ` +
    "Written 100 at a time (they share commits), with progress every 100 entries; an entry that fails is listed and the others are stored. Can run as a task.",
  input: z.object({
    namespace,
    entries: z.array(z.strictObject({ key, value, tags: tags.optional() }))
      .min(1).max(IMPORT_MAX).describe(
        "Entries to store, in order (a key given twice ends with the later value)",
      ),
  }),
  output: z.object({
    namespace: z.string(),
    stored: z.number().int(),
    replaced: z.number().int(),
    failed: z.number().int(),
    errors: z.array(z.object({ key: z.string(), error: z.string() })),
    message: z.string(),
  }),
  annotations: { destructiveHint: false, idempotentHint: true },
  async handle(memory, args, call) {
    const total = args.entries.length;
    const outcome = await memory.importEntries(
      call.caller,
      args.namespace,
      args.entries,
      {
        signal: call.signal,
        progress: (done) =>
          call.progress(done, total, `${done} of ${total} entries written`),
      },
    );
    const failed = outcome.failed.length;
    return json({
      namespace: args.namespace,
      stored: outcome.stored,
      replaced: outcome.replaced,
      failed,
      errors: outcome.failed.slice(0, IMPORT_ERRORS_SHOWN),
      message:
        `Stored ${outcome.stored} of ${total} entries in "${args.namespace}"` +
        ` (${outcome.replaced} replaced)` +
        (failed > 0
          ? `; ${failed} failed${
            failed > IMPORT_ERRORS_SHOWN
              ? ` (the first ${IMPORT_ERRORS_SHOWN} listed)`
              : ""
          }.`
          : "."),
    });
  },
});

export const retrieveMemory = tool({
  name: "retrieve_memory",
  title: "Retrieve memory",
  touches: [],
  description: "Read one entry (value, tags, times) by namespace and key.",
  input: z.object({ namespace, key }),
  output: EntryOut,
  annotations: { readOnlyHint: true },
  async handle(memory, args, call) {
    return json(
      entryJson(await memory.retrieve(call.caller, args.namespace, args.key)),
    );
  },
});

export const updateMemory = tool({
  name: "update_memory",
  title: "Update memory",
  touches: [],
  description:
    "Replace the value of an existing entry; fails if the key does not exist (use store_memory to create).",
  input: z.object({ namespace, key, value }),
  output: z.object({ updated: z.literal(true), entry: EntryMetaOut }),
  annotations: { destructiveHint: true, idempotentHint: true },
  async handle(memory, args, call) {
    const entry = await memory.update(
      call.caller,
      args.namespace,
      args.key,
      args.value,
    );
    return json({ updated: true, entry: entryMeta(entry) });
  },
});

export const deleteMemory = tool({
  name: "delete_memory",
  title: "Delete memory",
  touches: [],
  description: "Delete one entry; fails if the key does not exist.",
  input: z.object({ namespace, key }),
  output: z.object({
    deleted: z.literal(true),
    namespace: z.string(),
    key: z.string(),
  }),
  annotations: { destructiveHint: true },
  async handle(memory, args, call) {
    await memory.delete(call.caller, args.namespace, args.key);
    return json({ deleted: true, namespace: args.namespace, key: args.key });
  },
});

export const listMemories = tool({
  name: "list_memories",
  title: "List memories",
  touches: [],
  description:
    "List the entries of a namespace in key order, optionally only those carrying all given tags. Pages: pass next_cursor back as cursor.",
  input: z.object({
    namespace,
    tags: tags.optional().describe(
      "Only entries carrying every one of these tags",
    ),
    limit: z.number().int().min(1).max(200).optional().describe(
      "Entries per page (default 50)",
    ),
    cursor: z.string().min(1).max(2000).optional().describe(
      "next_cursor from the previous page",
    ),
  }),
  output: z.object({
    namespace: z.string(),
    count: z.number().int(),
    entries: z.array(EntryOut),
    next_cursor: z.string().nullable(),
    // When the page is over list_budget: the whole page as a resource.
    resource_uri: z.string().optional(),
  }),
  annotations: { readOnlyHint: true },
  async handle(memory, args, call) {
    const page = await memory.list(call.caller, args.namespace, {
      tags: args.tags,
      limit: args.limit ?? 50,
      cursor: args.cursor,
    });
    const body = {
      namespace: args.namespace,
      count: page.entries.length,
      entries: page.entries.map((entry) => entryJson(entry, LIST_VALUE_CHARS)),
      next_cursor: page.cursor,
    };
    const listed = json(body);
    const text = JSON.stringify(body, null, 2);
    if (text.length <= memory.listBudget) return listed;
    // Over budget: a summary for the model, the whole page (values uncut) as a resource.
    const whole = JSON.stringify(
      { ...body, entries: page.entries.map((entry) => entryJson(entry)) },
      null,
      2,
    );
    const stored = memory.results.put(
      call,
      `list_memories ${args.namespace}`,
      "application/json",
      whole,
    );
    const keys = page.entries.map((entry) => entry.key);
    const shown = keys.slice(0, 20).join(", ");
    return {
      content: [
        {
          type: "text",
          text:
            `${body.count} entries in "${args.namespace}": ${shown}${
              keys.length > 20 ? `, and ${keys.length - 20} more` : ""
            }. The listing is ${text.length} characters (over list_budget ${memory.listBudget}); ` +
            `the whole page, values uncut (${stored.bytes} bytes), is stored as ${stored.uri} ` +
            `(resources/read, for this session).` +
            (page.cursor ? ` Next page: cursor ${page.cursor}` : ""),
        },
        resourceLink(stored),
      ],
      // Programs get the usual page (values cut) and the URI.
      structuredContent: { ...body, resource_uri: stored.uri },
    };
  },
});

/** Whose listing a resource is: it ends with that MCP session. */
