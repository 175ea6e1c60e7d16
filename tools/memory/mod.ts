// The memory server (svc-memory): persistent entries, hybrid search,
// conversations and agent context, on Deno KV locally or a hosted store
// shared by several daemons.

import { join } from "node:path";
import { z } from "zod";
import { openSecrets } from "../../platform/secrets.ts";
import { scoped, type Store } from "../../platform/store.ts";
import { openKvStore } from "../../platform/store_kv.ts";
import { defineServer, type ServerDeps } from "../kit/mod.ts";
import { DeferredBackend } from "./backend_deferred.ts";
import { HostedBackend, type RemoteConnector } from "./backend_hosted.ts";
import { KvBackend } from "./backend_kv.ts";
import { openKvConnect } from "./backend_kv_connect.ts";
import { PgBackend } from "./backend_pg.ts";
import { conversationTools } from "./conversations.ts";
import { createEmbedder, EmbedderConfig } from "./embedder.ts";
import { entryTools } from "./entries.ts";
import { searchTools } from "./search.ts";
import { DEFAULT_SENSITIVE_TAG, MemoryService } from "./service.ts";

export const MemoryConfig = z.object({
  storage: z.enum(["local", "hosted"]).default("local")
    .describe(
      "local: a Deno KV file; hosted: PostgreSQL or remote Deno KV shared by several daemons",
    ),
  path: z.string().min(1).optional()
    .describe(
      "Directory of the local store (default: the data dir's shared store)",
    ),
  url: z.string().min(1).optional()
    .describe(
      "Hosted store: postgres://user@host:port/db, or https://… for KV Connect",
    ),
  key: z.string().min(1).optional()
    .describe(
      "Password (PostgreSQL) or access token (KV Connect) of the hosted store",
    ),
  sensitive_tag: z.string().min(1).max(64).default(DEFAULT_SENSITIVE_TAG)
    .describe("Entries with this tag are encrypted at rest and never embedded"),
  sync_interval_ms: z.number().int().min(100).max(600_000).default(5000)
    .describe(
      "Hosted mode: first retry delay while the hosted store is unreachable",
    ),
  ...EmbedderConfig.shape,
});
export type MemoryConfig = z.output<typeof MemoryConfig>;

export const memoryServer = defineServer<MemoryService>({
  id: "memory",
  namespace: "svc-memory",
  title: "Memory",
  version: "1.0.0",
  instructions:
    "Persistent memory for agents: store_memory/retrieve_memory/update_memory/delete_memory/list_memories " +
    "work on entries {namespace, key, value, tags}; search_memory finds entries by meaning and words; " +
    "cross_reference searches several namespaces; store_conversation/get_conversation_history keep " +
    "conversations; get_agent_context returns everything stored for an agent. An agent's namespace is its name.",
  config: MemoryConfig,
  tools: [...entryTools, ...searchTools, ...conversationTools],
  async start(deps) {
    const config = MemoryConfig.parse(deps.config);
    const secrets = await openSecrets({ env: deps.env, dataDir: deps.dataDir });
    const embedder = createEmbedder(config, deps.env);
    const opened = await openBackend(config, deps);
    const memory = new MemoryService({
      backend: opened.backend,
      embedder,
      dataKey: secrets.dataKey,
      log: deps.log,
      sensitiveTag: config.sensitive_tag,
    });
    memory.start();
    deps.log.info("memory_ready", {
      storage: opened.backend.kind,
      embedder: embedder.id,
      key_source: secrets.source,
    });
    return {
      context: memory,
      health: () => memory.health(),
      metrics: () => memory.metrics(),
      async stop() {
        await memory.stop();
        await opened.backend.close();
        await opened.close();
      },
    };
  },
});

/**
 * The backend the config asks for, and what else to close when the server
 * stops. Config and store files are checked now, so mistakes stop the start;
 * loading entries into the search indexes (seconds at 100k entries) goes on
 * behind a DeferredBackend while the server already answers.
 */
async function openBackend(
  config: MemoryConfig,
  deps: ServerDeps,
): Promise<{ backend: DeferredBackend; close(): Promise<void> }> {
  if (config.storage === "local") {
    if (config.url !== undefined) {
      throw new Error(
        "--url is for --storage hosted; with --storage local use --path DIR",
      );
    }
    const own = config.path
      ? await openKvStore(join(config.path, "memory.kv"))
      : undefined;
    const loading = KvBackend.open(own ?? scoped(deps.store, ["entries"]), {
      logger: deps.log,
    });
    return {
      backend: new DeferredBackend("local", loading),
      close: async () => await own?.close(),
    };
  }
  if (config.url === undefined) {
    throw new Error(
      "--storage hosted needs --url (postgres://… or https://… for KV Connect)",
    );
  }
  if (config.key !== undefined) deps.log.addSecret(config.key);
  const remote = remoteConnector(config.url, config.key, deps);
  // The local side of hosted mode: a cache and the durable write queue.
  const local: Store = config.path
    ? await openKvStore(join(config.path, "memory-cache.kv"))
    : deps.store;
  const loading = KvBackend.open(scoped(local, ["cache"]), { logger: deps.log })
    .then((cache) =>
      HostedBackend.open({
        remote,
        cache,
        store: scoped(local, ["queue"]),
        log: deps.log,
        probeIntervalMs: config.sync_interval_ms,
      })
    );
  return {
    backend: new DeferredBackend(`hosted(${remote.kind})`, loading),
    close: async () => local === deps.store ? undefined : await local.close(),
  };
}

function remoteConnector(
  url: string,
  key: string | undefined,
  deps: ServerDeps,
): RemoteConnector {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new Error(
      `--url is not a URL; expected postgres://user@host:port/db or https://… (KV Connect)`,
    );
  }
  if (protocol === "postgres:" || protocol === "postgresql:") {
    return {
      kind: "postgres",
      connect: () => PgBackend.connect({ url, key, log: deps.log }),
    };
  }
  if (protocol === "https:" || protocol === "http:") {
    return {
      kind: "kv-connect",
      connect: () => openKvConnect({ url, token: key, log: deps.log }),
    };
  }
  throw new Error(
    `Unsupported hosted store URL ${protocol}//…: use postgres://… or https://… (KV Connect)`,
  );
}
