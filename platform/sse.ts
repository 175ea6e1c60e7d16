// A Server-Sent Events parser (WHATWG HTML §9.2.6) fed with text as it
// arrives: chunk boundaries may fall anywhere, even between a CR and its LF.
// Model providers' streams (agents/providers) and the gateway's HTTP
// upstream (tools/kit/transport/http_client.ts) both read with it.

export interface SseEvent {
  /** The `event:` field; "message" when the event has none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The event's `id:` field, when the parser keeps ids and the event set one. */
  id?: string;
}

export interface SseOptions {
  /**
   * Keep `id:` fields: an event carries the id it set, and an event that sets
   * an id but no data is still delivered (a stream's resumption point).
   */
  ids?: boolean;
  /** At `end()`, deliver an event whose blank line never came (lenient, unlike the spec). */
  unterminated?: boolean;
}

export class SseParser {
  readonly #options: SseOptions;
  #buffer = "";
  #event = "";
  #data: string[] = [];
  #id: string | undefined;
  /** A chunk ended in CR: an LF starting the next chunk belongs to the same line end. */
  #afterCr = false;
  #started = false;

  constructor(options: SseOptions = {}) {
    this.#options = options;
  }

  /** Feeds decoded text; returns the events completed by it. */
  push(text: string): SseEvent[] {
    if (text === "") return [];
    if (!this.#started) {
      this.#started = true;
      if (text.startsWith("\uFEFF")) text = text.slice(1);
    }
    if (this.#afterCr && text.startsWith("\n")) text = text.slice(1);
    this.#afterCr = false;
    this.#buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.#buffer.length; i++) {
      const c = this.#buffer[i];
      if (c !== "\n" && c !== "\r") continue;
      this.#line(this.#buffer.slice(start, i), events);
      if (c === "\r") {
        if (i + 1 === this.#buffer.length) this.#afterCr = true;
        else if (this.#buffer[i + 1] === "\n") i++;
      }
      start = i + 1;
    }
    this.#buffer = this.#buffer.slice(start);
    return events;
  }

  /** Ends the stream; see `SseOptions.unterminated` for an event left open. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.#buffer.length > 0) this.#line(this.#buffer, events);
    this.#buffer = "";
    if (this.#options.unterminated) this.#line("", events);
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === "") {
      const id = this.#id;
      if (this.#data.length > 0 || id !== undefined) {
        const event: SseEvent = {
          event: this.#event || "message",
          data: this.#data.join("\n"),
        };
        if (id !== undefined) event.id = id;
        events.push(event);
      }
      this.#event = "";
      this.#data = [];
      this.#id = undefined;
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#event = value;
    else if (field === "id" && this.#options.ids && !value.includes("\0")) {
      this.#id = value;
    }
    // `retry` sets an EventSource's reconnection delay; no reader here uses it.
  }
}
