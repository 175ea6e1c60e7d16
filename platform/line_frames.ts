// Newline-delimited frames over byte streams (MCP's stdio framing): a reader
// that turns chunks into lines and a writer that sends the lines queued in
// one turn of the event loop with one write. No JSON here: the kit's stdio
// transports parse and check the messages.

/** The longest line a reader keeps, in UTF-16 code units (the MCP SDK's stdio limit is 10 MiB). */
export const MAX_LINE_DEFAULT = 10 * 1024 * 1024;

export interface LineSink {
  /** One complete line, without its `\n` or `\r\n`. */
  line(text: string): void;
  /** A line longer than the limit: it is dropped whole, reading goes on after its newline. */
  oversized(length: number): void;
}

/**
 * Splits UTF-8 chunks into lines. A line may span chunks and a chunk may hold
 * many lines; a multi-byte character split across chunks is kept whole.
 * Blank lines are skipped.
 */
export class LineSplitter {
  #decoder = new TextDecoder();
  /** Text of the line under way, before the current chunk. */
  #partial = "";
  /** Length of the line being dropped, or -1 when none is. */
  #dropping = -1;
  readonly #max: number;
  readonly #sink: LineSink;

  constructor(sink: LineSink, options: { maxLine?: number } = {}) {
    this.#sink = sink;
    this.#max = options.maxLine ?? MAX_LINE_DEFAULT;
  }

  push(chunk: Uint8Array): void {
    this.#text(this.#decoder.decode(chunk, { stream: true }));
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    this.#text(this.#decoder.decode());
    if (this.#dropping >= 0) {
      this.#sink.oversized(this.#dropping);
    } else if (this.#partial !== "") {
      this.#emit(this.#partial);
    }
    this.#partial = "";
    this.#dropping = -1;
  }

  #text(text: string): void {
    let start = 0;
    for (
      let newline = text.indexOf("\n");
      newline !== -1;
      newline = text.indexOf("\n", start)
    ) {
      if (this.#dropping >= 0) {
        this.#sink.oversized(this.#dropping + newline - start);
        this.#dropping = -1;
      } else if (this.#partial === "") {
        this.#emitChecked(text.slice(start, newline));
      } else {
        this.#emitChecked(this.#partial + text.slice(start, newline));
        this.#partial = "";
      }
      start = newline + 1;
    }
    if (start === text.length) return;
    const rest = text.length - start;
    if (this.#dropping >= 0) {
      this.#dropping += rest;
    } else if (this.#partial.length + rest > this.#max) {
      this.#dropping = this.#partial.length + rest;
      this.#partial = "";
    } else {
      // Concatenation makes a rope: a huge line costs one flattening, at JSON.parse.
      this.#partial += start === 0 ? text : text.slice(start);
    }
  }

  #emitChecked(line: string): void {
    if (line.length > this.#max) this.#sink.oversized(line.length);
    else this.#emit(line);
  }

  #emit(line: string): void {
    const text = line.endsWith("\r") ? line.slice(0, -1) : line;
    if (text.trim() !== "") this.#sink.line(text);
  }
}

/** Where a writer's bytes go: `Deno.stdout`, a pipe, a file. */
export interface ByteSink {
  write(bytes: Uint8Array): Promise<number>;
}

/**
 * Writes lines in order. Lines queued while a write runs, or in the same
 * turn of the event loop, leave together in one write. A write that fails
 * fails every line after it; `failed` hears of it once.
 */
export class LineWriter {
  #encoder = new TextEncoder();
  #queue: string[] = [];
  #waiters: PromiseWithResolvers<void>[] = [];
  #running: Promise<void> | undefined;
  #failure: Error | undefined;
  readonly #sink: ByteSink;
  readonly #failed: ((error: Error) => void) | undefined;

  constructor(sink: ByteSink, failed?: (error: Error) => void) {
    this.#sink = sink;
    this.#failed = failed;
  }

  /** Queues `line` (without its newline); resolves once it is written. */
  write(line: string): Promise<void> {
    if (this.#failure) return Promise.reject(this.#failure);
    const waiter = Promise.withResolvers<void>();
    this.#queue.push(line, "\n");
    this.#waiters.push(waiter);
    this.#running ??= this.#run();
    return waiter.promise;
  }

  /** Resolves once everything queued so far is written (or writing failed). */
  async drain(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #run(): Promise<void> {
    // Let the rest of this turn queue its lines first.
    await Promise.resolve();
    try {
      while (this.#queue.length > 0) {
        const bytes = this.#encoder.encode(this.#queue.join(""));
        const waiters = this.#waiters;
        this.#queue = [];
        this.#waiters = [];
        try {
          await writeAll(this.#sink, bytes);
        } catch (error) {
          this.#failure = error instanceof Error
            ? error
            : new Error(String(error));
          for (const waiter of [...waiters, ...this.#waiters]) {
            waiter.reject(this.#failure);
          }
          this.#queue = [];
          this.#waiters = [];
          this.#failed?.(this.#failure);
          return;
        }
        for (const waiter of waiters) waiter.resolve();
      }
    } finally {
      this.#running = undefined;
    }
  }
}

/** Writes all of `bytes`, however many writes the sink takes. */
export async function writeAll(
  sink: ByteSink,
  bytes: Uint8Array,
): Promise<void> {
  for (let written = 0; written < bytes.length;) {
    written += await sink.write(bytes.subarray(written));
  }
}

export interface ChunkReader {
  read(): Promise<Uint8Array | undefined>;
  cancel(): Promise<void>;
}

const CHUNK = 64 * 1024;

/**
 * Reads a byte stream (stdin, a child's pipe) into one reused buffer; a
 * stream without BYOB reads chunk by chunk. Deno's stdin and pipe streams
 * would otherwise allocate a fresh 64 KiB buffer per read, one per message
 * for a peer that waits for each answer. A chunk is valid until the next read.
 */
export function chunkReader(stream: ReadableStream<Uint8Array>): ChunkReader {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    const reader = stream.getReader();
    return {
      read: async () => (await reader.read()).value,
      cancel: () => reader.cancel(),
    };
  }
  const bytes = byob;
  let buffer = new ArrayBuffer(CHUNK);
  return {
    async read() {
      const { done, value } = await bytes.read(new Uint8Array(buffer));
      if (done || value === undefined) return undefined;
      // The stream hands the buffer back (transferred): keep it for the next read.
      buffer = value.buffer;
      return value;
    },
    cancel: () => bytes.cancel(),
  };
}

/**
 * Reads `stream` to its end and gives `sink` each line (a last line without a
 * newline included). A read that fails (a broken pipe) ends it quietly: the
 * peer is gone, and its exit tells the owner.
 */
export async function readLines(
  stream: ReadableStream<Uint8Array>,
  sink: LineSink,
  options: { maxLine?: number } = {},
): Promise<void> {
  const splitter = new LineSplitter(sink, options);
  const reader = chunkReader(stream);
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk === undefined) break;
      splitter.push(chunk);
    }
  } catch {
    // The pipe broke; what was read so far still counts.
  }
  splitter.end();
}
