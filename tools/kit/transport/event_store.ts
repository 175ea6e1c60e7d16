// A session's recent SSE events, kept for clients resuming a broken stream
// (Last-Event-ID), bounded in count and in the memory they hold.

import type { EventStore, JSONRPCMessage } from "../../../platform/mcp_sdk.ts";

/**
 * Bytes a session's events may hold. Under load every call slower than 1 s
 * answers on a stream and leaves its response here, so every session of a
 * busy daemon fills its store: this times the open sessions is what the
 * stores hold then (16 KiB × 200 sessions: 3.2 MiB). A broken stream is
 * resumed within seconds and needs only what came after its last event,
 * usually one response; the newest event always stays, however big.
 */
export const EVENT_STORE_BYTES = 16 * 1024;
/** Counted per event besides its text: the entry, its id, the array slot. */
const EVENT_OVERHEAD = 96;

interface StoredEvent {
  id: string;
  streamId: string;
  /** The message serialized: one string, not the message's object tree (which takes about twice the memory and ~30 objects per response for the GC to mark). */
  json: string;
  bytes: number;
}

/**
 * Keeps a session's recent SSE events so a client can resume a broken
 * stream with Last-Event-ID. Bounded by count and by the bytes the events
 * hold (the newest event always stays): a long-lived session must not hold
 * every response it sent.
 */
export class MemoryEventStore implements EventStore {
  readonly #events: StoredEvent[] = [];
  readonly #limit: number;
  readonly #maxBytes: number;
  #bytes = 0;
  #sequence = 0;

  constructor(limit = 100, maxBytes = EVENT_STORE_BYTES) {
    this.#limit = limit;
    this.#maxBytes = maxBytes;
  }

  get count(): number {
    return this.#events.length;
  }

  /** Memory the events kept hold (their text, ids and entries). */
  get bytes(): number {
    return this.#bytes;
  }

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}.${++this.#sequence}`;
    const json = JSON.stringify(message);
    const bytes = stringBytes(json) + stringBytes(id) + EVENT_OVERHEAD;
    this.#events.push({ id, streamId, json, bytes });
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
      if (event.streamId === streamId) {
        await send(event.id, JSON.parse(event.json));
      }
    }
    return streamId;
  }
}

/** What V8 takes for the string: a byte per character, two if any is past U+00FF. */
function stringBytes(text: string): number {
  // deno-lint-ignore no-control-regex
  return /[^\u0000-\u00ff]/.test(text) ? text.length * 2 : text.length;
}
