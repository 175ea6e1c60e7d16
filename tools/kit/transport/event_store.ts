// A session's recent SSE events, kept for clients resuming a broken stream
// (Last-Event-ID), bounded in count and bytes.

import type { EventStore, JSONRPCMessage } from "../../../platform/mcp_sdk.ts";

/**
 * Keeps a session's recent SSE events so a client can resume a broken
 * stream with Last-Event-ID. Bounded by count and by bytes (the newest event
 * always stays): a long-lived session must not hold every response it sent.
 */
export class MemoryEventStore implements EventStore {
  readonly #events: {
    id: string;
    streamId: string;
    message: JSONRPCMessage;
    bytes: number;
  }[] = [];
  readonly #limit: number;
  readonly #maxBytes: number;
  #bytes = 0;
  #sequence = 0;

  constructor(limit = 100, maxBytes = 64 * 1024) {
    this.#limit = limit;
    this.#maxBytes = maxBytes;
  }

  get count(): number {
    return this.#events.length;
  }

  /** Serialized size of the events kept. */
  get bytes(): number {
    return this.#bytes;
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}.${++this.#sequence}`;
    const bytes = JSON.stringify(message).length;
    this.#events.push({ id, streamId, message, bytes });
    this.#bytes += bytes;
    while (
      this.#events.length > 1 &&
      (this.#events.length > this.#limit || this.#bytes > this.#maxBytes)
    ) {
      this.#bytes -= this.#events.shift()?.bytes ?? 0;
    }
    return Promise.resolve(id);
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return Promise.resolve(
      this.#events.find((event) => event.id === eventId)?.streamId,
    );
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: {
      send: (eventId: string, message: JSONRPCMessage) => Promise<void>;
    },
  ): Promise<string> {
    const index = this.#events.findIndex((event) => event.id === lastEventId);
    if (index === -1) {
      throw new Error(`Unknown or expired event id: ${lastEventId}`);
    }
    const streamId = this.#events[index].streamId;
    for (const event of this.#events.slice(index + 1)) {
      if (event.streamId === streamId) await send(event.id, event.message);
    }
    return streamId;
  }
}
