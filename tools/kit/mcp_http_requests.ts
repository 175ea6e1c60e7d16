// Which request is which in one streamable HTTP session (mcp_http_session.ts).
// A client may reuse the id of a request it cancelled or abandoned while the
// server still runs that call; its late answer must not answer the new one.
// So each accepted request has its own server-side id: the client's id when
// no request the server may still run holds it (the usual case, nothing
// rewritten), a fresh one otherwise, turned back into the client's on the way
// out.

import type { JSONRPCMessage, RequestId } from "../../platform/mcp_sdk.ts";

/** Ids of abandoned or cancelled requests whose late messages are dropped quietly. */
const MAX_GONE = 1024;

export class SessionRequests {
  /** Open requests: the client's id → the server's. */
  readonly #open = new Map<RequestId, RequestId>();
  /** Server ids that differ from their client's: server id → client id. */
  readonly #renamed = new Map<RequestId, RequestId>();
  /** Server ids of requests gone from the client that the server may still answer. */
  readonly #gone = new Set<RequestId>();
  #renames = 0;

  /** The client has a request of this id open. */
  isOpen(clientId: RequestId): boolean {
    return this.#open.has(clientId);
  }

  /** The server id of a newly accepted request; `running` tells the server ids of open requests. */
  accept(
    clientId: RequestId,
    running: (serverId: RequestId) => boolean,
  ): RequestId {
    let serverId = clientId;
    while (running(serverId) || this.#gone.has(serverId)) {
      serverId = `${String(clientId)}~${++this.#renames}`;
    }
    this.#open.set(clientId, serverId);
    if (serverId !== clientId) this.#renamed.set(serverId, clientId);
    return serverId;
  }

  /** The server id of the client's open request `clientId`, if one is open. */
  serverId(clientId: RequestId): RequestId | undefined {
    return this.#open.get(clientId);
  }

  /** `message` (a request, or a cancellation naming one) as the server sees it. */
  toServer(message: JSONRPCMessage, serverId: RequestId): JSONRPCMessage {
    if (!this.#renamed.has(serverId)) return message;
    if ("id" in message) return { ...message, id: serverId };
    if ("method" in message) {
      return {
        ...message,
        params: { ...message.params, requestId: serverId },
      };
    }
    return message;
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
    this.#renamed.delete(serverId);
  }

  /** Later messages for `serverId` have no one to go to: drop them quietly. */
  forget(serverId: RequestId): void {
    this.#gone.add(serverId);
    if (this.#gone.size > MAX_GONE) {
      for (const oldest of this.#gone) {
        this.#gone.delete(oldest);
        break;
      }
    }
  }

  /** A message for a request gone from its client; its response also frees the id. */
  isGone(serverId: RequestId, response: boolean): boolean {
    if (!this.#gone.has(serverId)) return false;
    if (response) this.#gone.delete(serverId);
    return true;
  }

  clear(): void {
    this.#open.clear();
    this.#renamed.clear();
    this.#gone.clear();
  }
}
