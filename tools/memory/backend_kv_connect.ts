// A remote Deno KV over KV Connect (`Deno.openKv(url)`), as the hosted
// store: a KvBackend whose connectivity failures become BackendUnavailable,
// so HostedBackend serves from its cache and queues writes instead of failing.

import { type Logger, publicUrl } from "../../platform/log.ts";
import { KvStore } from "../../platform/store_kv.ts";
import {
  BackendUnavailable,
  EntryNotFound,
  type MemoryBackend,
} from "./backend.ts";
import { KvBackend } from "./backend_kv.ts";
import { messageOf } from "../../platform/errors.ts";

// Deno reports KV Connect transport failures as plain errors with these words.
const NETWORK =
  /failed to connect|error sending request|connection (refused|reset|closed)|timed out|dns error|tcp connect/i;

export async function openKvConnect(options: {
  url: string;
  token?: string;
  log: Logger;
}): Promise<MemoryBackend> {
  const where = publicUrl(options.url);
  // Deno reads the KV Connect access token from this variable.
  if (options.token !== undefined) {
    Deno.env.set("DENO_KV_ACCESS_TOKEN", options.token);
  }
  let kv: Deno.Kv;
  try {
    kv = await Deno.openKv(options.url);
  } catch (error) {
    throw unavailableOr(error, where);
  }
  const backend = await KvBackend.open(new KvStore(kv), {
    kind: "kv-connect",
    logger: options.log,
  });
  return withNetworkErrors(backend, where);
}

function unavailableOr(error: unknown, where: string): unknown {
  if (error instanceof EntryNotFound) return error;
  const message = messageOf(error);
  return NETWORK.test(message)
    ? new BackendUnavailable(`Cannot reach KV Connect at ${where}: ${message}`)
    : error;
}

/** The same backend, with transport failures reported as BackendUnavailable. */
function withNetworkErrors(inner: MemoryBackend, where: string): MemoryBackend {
  const guard = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw unavailableOr(error, where);
    }
  };
  return {
    kind: inner.kind,
    get: (namespace, key) => guard(() => inner.get(namespace, key)),
    put: (entry, mode) => guard(() => inner.put(entry, mode)),
    delete: (namespace, key) => guard(() => inner.delete(namespace, key)),
    list: (namespace, query) => guard(() => inner.list(namespace, query)),
    countByNamespace: () => guard(() => inner.countByNamespace()),
    search: (namespace, query) => guard(() => inner.search(namespace, query)),
    staleEmbeddings: (embedder, limit) =>
      guard(() => inner.staleEmbeddings(embedder, limit)),
    setEmbedding: (namespace, key, updatedAt, embedding) =>
      guard(() => inner.setEmbedding(namespace, key, updatedAt, embedding)),
    appendMessages: (namespace, sessionId, messages) =>
      guard(() => inner.appendMessages(namespace, sessionId, messages)),
    history: (namespace, sessionId, limit) =>
      guard(() => inner.history(namespace, sessionId, limit)),
    sessions: (namespace) => guard(() => inner.sessions(namespace)),
    health: () => inner.health(),
    close: () => inner.close(),
  };
}
