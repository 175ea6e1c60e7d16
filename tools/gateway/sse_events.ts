// Server-sent events parsed straight off the bytes of a response body, for
// the gateway's HTTP upstream transport (http_transport.ts): no
// TextDecoderStream or EventSourceParserStream pipes, one decode per chunk.

/** One event of an SSE stream. */
export interface SseEvent {
  type: string;
  data: string;
  id?: string;
}

const LF = 0x0a;
const CR = 0x0d;

/** An incremental SSE parser over bytes (the WHATWG event stream format). */
export class SseEvents {
  readonly #decoder = new TextDecoder();
  readonly #emit: (event: SseEvent) => void;
  #rest = "";
  #afterCr = false;
  #type = "";
  #data: string[] = [];
  #id?: string;

  constructor(emit: (event: SseEvent) => void) {
    this.#emit = emit;
  }

  push(chunk: Uint8Array): void {
    let text = this.#decoder.decode(chunk, { stream: true });
    // A CRLF split across chunks: the LF belongs to the line already ended.
    if (this.#afterCr && text.charCodeAt(0) === LF) text = text.slice(1);
    this.#afterCr = false;
    this.#lines(this.#rest + text);
  }

  /** The stream ended: an event without its blank line is dropped, as the spec says. */
  end(): void {
    const rest = this.#rest + this.#decoder.decode();
    this.#rest = "";
    if (rest !== "") this.#line(rest);
  }

  #lines(text: string): void {
    let start = 0;
    const length = text.length;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code !== LF && code !== CR) continue;
      this.#line(text.slice(start, i));
      if (code === CR) {
        if (i + 1 === length) this.#afterCr = true;
        else if (text.charCodeAt(i + 1) === LF) i++;
      }
      start = i + 1;
    }
    this.#rest = start === 0 ? text : text.slice(start);
  }

  #line(line: string): void {
    if (line === "") {
      if (this.#data.length > 0) {
        const event: SseEvent = {
          type: this.#type,
          data: this.#data.join("\n"),
        };
        if (this.#id !== undefined) event.id = this.#id;
        this.#emit(event);
      } else if (this.#id !== undefined) {
        this.#emit({ type: this.#type, data: "", id: this.#id });
      }
      this.#type = "";
      this.#data = [];
      this.#id = undefined;
      return;
    }
    if (line.charCodeAt(0) === 0x3a) return; // ":" comment, keep-alive
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    if (field === "data") this.#data.push(value);
    else if (field === "event") this.#type = value;
    else if (field === "id" && !value.includes("\0")) this.#id = value;
    // "retry" sets the reconnection delay of an EventSource; the GET stream keeps its own.
  }
}
