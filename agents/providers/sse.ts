// A Server-Sent Events parser (WHATWG HTML §9.2.6) fed with text as it
// arrives: chunk boundaries may fall anywhere, even between a CR and its LF.

export interface SseEvent {
  /** The `event:` field; "message" when the event has none. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
}

export class SseParser {
  #buffer = "";
  #event = "";
  #data: string[] = [];
  /** A chunk ended in CR: an LF starting the next chunk belongs to the same line end. */
  #afterCr = false;
  #started = false;

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

  /** Ends the stream; an unterminated last event is still delivered (lenient, unlike the spec). */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.#buffer.length > 0) this.#line(this.#buffer, events);
    this.#buffer = "";
    this.#line("", events);
    return events;
  }

  #line(line: string, events: SseEvent[]): void {
    if (line === "") {
      if (this.#data.length > 0) {
        events.push({
          event: this.#event || "message",
          data: this.#data.join("\n"),
        });
      }
      this.#event = "";
      this.#data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#event = value;
    // `id` and `retry` matter only to EventSource reconnection, which we never do.
  }
}
