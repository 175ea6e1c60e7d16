// A remote Deno KV over KV Connect (`Deno.openKv(url)`), as the hosted
// store: a KvBackend whose connectivity failures become BackendUnavailable,
// so HostedBackend serves from its cache and queues writes instead of failing.

import { KvStore } from "../../../platform/store/kv.ts";
import {
  BackendUnavailable,
  EntryNotFound,
  type MemoryBackend,
} from "./port.ts";
import { KvBackend } from "./kv.ts";
import { ForwardingBackend, type StorageCall } from "./forwarding.ts";
import type { BackendHealth } from "../model.ts";
import { openKvConnect } from "../../../platform/store/kv_connect.ts";
import { type Logger, publicUrl } from "../../../platform/log.ts";
import { messageOf } from "../../../platform/errors.ts";

// Deno reports KV Connect transport failures as plain errors with these words.
const NETWORK =
  /failed to connect|error sending request|connection (refused|reset|closed)|timed out|dns error|tcp connect/i;

export async function connectKvBackend(options: {
  url: string;
  token?: string;
  log: Logger;
}): Promise<MemoryBackend> {
  const where = publicUrl(options.url);
  let kv: Deno.Kv;
  try {
    kv = await openKvConnect(options.url, options.token);
  } catch (error) {
    throw unavailableOr(error, where);
  }
  const backend = await KvBackend.open(new KvStore(kv), {
    kind: "kv-connect",
    logger: options.log,
  });
  return new NetworkGuarded(backend, where);
}

function unavailableOr(error: unknown, where: string): unknown {
  if (error instanceof EntryNotFound) return error;
  const message = messageOf(error);
  return NETWORK.test(message)
    ? new BackendUnavailable(`Cannot reach KV Connect at ${where}: ${message}`)
    : error;
}

/** The same backend, with transport failures reported as BackendUnavailable. */
class NetworkGuarded extends ForwardingBackend {
  readonly kind: string;
  constructor(readonly inner: MemoryBackend, readonly where: string) {
    super();
    this.kind = inner.kind;
  }
  protected async forward<R>(call: StorageCall<R>): Promise<R> {
    try {
      return await call(this.inner);
    } catch (error) {
      throw unavailableOr(error, this.where);
    }
  }
  health(): Promise<BackendHealth> {
    return this.inner.health();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
