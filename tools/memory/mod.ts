// The memory server (svc-memory): persistent entries, hybrid search,
// conversations and agent context, on Deno KV locally or a hosted store
// shared by several daemons.

import { openSecrets } from "../../platform/secrets.ts";
import { defineServer, gatherTools, serviceRuntime } from "../kit/mod.ts";
import { resultsTemplate } from "../kit/session_results.ts";
import { TOOL_LISTINGS } from "./tool_listings.ts";
import { openBackend } from "./backends/open.ts";
import * as conversations from "./conversation_tools.ts";
import { MemoryConfig } from "./config.ts";
import { createEmbedder } from "./embedder.ts";
import * as entries from "./entry_tools.ts";
import * as search from "./search_tools.ts";
import { MemoryService, RESULT_PREFIX } from "./service.ts";

/** tools/list order: entries, search, conversations; name every tool here. */
const ORDER = [
  "store_memory",
  "import_memories",
  "retrieve_memory",
  "update_memory",
  "delete_memory",
  "list_memories",
  "search_memory",
  "cross_reference",
  "store_conversation",
  "get_conversation_history",
  "get_agent_context",
];

export const memoryServer = defineServer<MemoryService>({
  id: "memory",
  namespace: "svc-memory",
  title: "Memory",
  version: "1.0.0",
  instructions:
    "Persistent memory for agents: store_memory/retrieve_memory/update_memory/delete_memory/list_memories " +
    "work on entries {namespace, key, value, tags}; import_memories stores many at once; search_memory finds entries by meaning and words; " +
    "cross_reference searches several namespaces; store_conversation/get_conversation_history keep " +
    "conversations; get_agent_context returns everything stored for an agent. An agent's namespace is its name.",
  config: MemoryConfig,
  listings: TOOL_LISTINGS, // tools/list entries, generated: tools/tool_listings.ts
  tools: gatherTools(ORDER, {
    entry: entries,
    search,
    conversation: conversations,
  }),
  resourceTemplates: [
    resultsTemplate(RESULT_PREFIX, (memory) => memory.results, {
      title: "A long listing of this session",
      description:
        "A list_memories page over list_budget, values uncut, kept until the session ends",
      mimeType: "application/json",
    }),
  ],
  async start(deps) {
    const config = MemoryConfig.parse(deps.config);
    const secrets = await openSecrets({ env: deps.env, dataDir: deps.dataDir });
    const embedder = createEmbedder(config, deps.env);
    const opened = await openBackend(config, deps, secrets.dataKey);
    const memory = new MemoryService({
      backend: opened.backend,
      embedder,
      dataKey: secrets.dataKey,
      log: deps.log,
      sensitiveTag: config.sensitive_tag,
      listBudget: config.list_budget,
      resultsMaxBytes: config.results_max_bytes,
    });
    memory.start();
    deps.log.info("memory_ready", {
      storage: opened.backend.kind,
      embedder: embedder.id,
      key_source: secrets.source,
    });
    return serviceRuntime(memory, {
      // Long listings kept for a session go with it.
      sessionClosed: (sessionId) =>
        memory.results.forget(`session:${sessionId}`),
      async stop() {
        await memory.stop();
        await opened.backend.close();
        await opened.close();
      },
    });
  },
});
