// Which request is which in one streamable HTTP session (http_session.ts).
// A client may reuse the id of a request it cancelled or abandoned while the
// server still runs that call; its late answer must not answer the new one.
// So each accepted request has its own server-side id: the client's id when
// no request the server may still run holds it (the usual case, nothing
// rewritten), a fresh one otherwise, turned back into the client's on the way
// out. A fresh id carries a random per-session prefix, so no client id can
// equal it and no client can cancel a request by it. Ids of gone requests are
// held up to a cap; once a session has let go of an abandoned call's id while
// that call may still run, every later request gets a fresh id, so none can
// take an old answer. (A cancelled call sends nothing more through the SDK,
// only a message already on its way: its id may go safely.) Ids 0 and "" are
// always renamed: the SDK ignores a cancellation naming a falsy id, so such a
// call could not be cancelled and would answer after all.

import type { JSONRPCMessage, RequestId } from "../../../platform/mcp_sdk.ts";

/** Longer request ids are refused: every id a session holds stays small. */
export const MAX_ID_LENGTH = 1024;
/** Ids of gone requests held, per kind (abandoned, cancelled). */
const MAX_GONE = 1024;

/**
 * Server ids whose late messages are dropped quietly, each with its client's
 * id; the oldest go first past the cap.
 */
class GoneIds {
  readonly #ids = new Map<RequestId, RequestId>();
  /** An id was let go past the cap. */
  overflowed = false;

  has(id: RequestId): boolean {
    return this.#ids.has(id);
  }

  add(id: RequestId, clientId: RequestId): void {
    this.#ids.set(id, clientId);
    if (this.#ids.size <= MAX_GONE) return;
    this.overflowed = true;
    for (const oldest of this.#ids.keys()) {
      this.#ids.delete(oldest);
      break;
    }
  }

  /** The server id last held for a request the client knew as `clientId`. */
  latest(clientId: RequestId): RequestId | undefined {
    let latest: RequestId | undefined;
    for (const [id, client] of this.#ids) if (client === clientId) latest = id;
    return latest;
  }

  delete(id: RequestId): boolean {
    return this.#ids.delete(id);
  }

  clear(): void {
    this.#ids.clear();
  }
}

export class SessionRequests {
  /** Open requests: the client's id → the server's. */
  readonly #open = new Map<RequestId, RequestId>();
  /** Server ids of open requests. */
  readonly #serving = new Set<RequestId>();
  /** Server ids that differ from their client's: server id → client id. */
  readonly #renamed = new Map<RequestId, RequestId>();
  /**
   * Abandoned by their client, their calls still run: held until their late
   * answer, apart from cancelled ones so that cancellations never push them out.
   */
  readonly #abandoned = new GoneIds();
  /** Cancelled: the SDK sends no answer for them, only a message already on its way. */
  readonly #cancelled = new GoneIds();
  readonly #prefix = `~${crypto.randomUUID()}~`;
  #renames = 0;

  /** The client has a request of this id open. */
  isOpen(clientId: RequestId): boolean {
    return this.#open.has(clientId);
  }

  /** A server id of this session's making: no client request is known by it. */
  isRenamed(id: RequestId): boolean {
    return typeof id === "string" && id.startsWith(this.#prefix);
  }

  /** The server id of a newly accepted request. */
  accept(clientId: RequestId): RequestId {
    let serverId = clientId;
    while (
      this.#serving.has(serverId) || this.#renamed.has(serverId) ||
      this.#abandoned.has(serverId) || this.#cancelled.has(serverId) ||
      // An abandoned call's id was let go: any client id may be one still running.
      (serverId === clientId && (this.#abandoned.overflowed || !clientId))
    ) {
      serverId = `${this.#prefix}${++this.#renames}`;
    }
    this.#open.set(clientId, serverId);
    this.#serving.add(serverId);
    if (serverId !== clientId) this.#renamed.set(serverId, clientId);
    return serverId;
  }

  /** The server id of the client's open request `clientId`, if one is open. */
  serverId(clientId: RequestId): RequestId | undefined {
    return this.#open.get(clientId);
  }

  /** `message` (a request, or a cancellation naming one) as the server sees it. */
  toServer(message: JSONRPCMessage, serverId: RequestId): JSONRPCMessage {
    return this.#renamed.has(serverId) ? naming(message, serverId) : message;
  }

  /** A cancellation of a gone request, naming its call's server id. */
  cancelling(message: JSONRPCMessage, serverId: RequestId): JSONRPCMessage {
    return naming(message, serverId);
  }

  /** A response as its client knows it (its own request id). */
  toClient(message: JSONRPCMessage): JSONRPCMessage {
    if (this.#renamed.size === 0 || !("id" in message)) return message;
    if (message.id === undefined) return message;
    const clientId = this.#renamed.get(message.id);
    return clientId === undefined ? message : { ...message, id: clientId };
  }

  /** The request is done with: its client id is free again. */
  close(serverId: RequestId): void {
    const clientId = this.#renamed.get(serverId) ?? serverId;
    if (this.#open.get(clientId) === serverId) this.#open.delete(clientId);
    this.#serving.delete(serverId);
    this.#renamed.delete(serverId);
  }

  /** Its client left `serverId` (still open) while its call may still run: its late answer is dropped. */
  abandon(serverId: RequestId): void {
    this.#abandoned.add(serverId, this.#renamed.get(serverId) ?? serverId);
  }

  /** `serverId` was cancelled: the SDK answers it no more (a message on its way is dropped). */
  cancel(serverId: RequestId): void {
    this.#abandoned.delete(serverId);
    this.#cancelled.add(serverId, this.#renamed.get(serverId) ?? serverId);
  }

  /**
   * The client cancels `clientId`, no longer open: the latest call it left by
   * that id (a client may reuse an id it left), if one still runs, is cancelled
   * now. Its server id.
   */
  cancelGone(clientId: RequestId): RequestId | undefined {
    const id = this.#abandoned.latest(clientId);
    if (id === undefined) return undefined;
    this.#abandoned.delete(id);
    this.#cancelled.add(id, clientId);
    return id;
  }

  /**
   * A message for a request gone from its client; its response also frees the
   * id. Once an abandoned call's id was let go, any unknown one is taken for
   * such a late message.
   */
  isGone(serverId: RequestId, response: boolean): boolean {
    const gone = this.#abandoned.has(serverId)
      ? this.#abandoned
      : this.#cancelled.has(serverId)
      ? this.#cancelled
      : undefined;
    if (!gone) {
      return this.#abandoned.overflowed && !this.#serving.has(serverId);
    }
    if (response) gone.delete(serverId);
    return true;
  }

  clear(): void {
    this.#open.clear();
    this.#serving.clear();
    this.#renamed.clear();
    this.#abandoned.clear();
    this.#cancelled.clear();
  }
}

/** A request under `serverId`, or a cancellation naming it. */
function naming(message: JSONRPCMessage, serverId: RequestId): JSONRPCMessage {
  if ("id" in message) return { ...message, id: serverId };
  if ("method" in message) {
    return { ...message, params: { ...message.params, requestId: serverId } };
  }
  return message;
}
