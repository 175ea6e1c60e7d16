// Native messaging framing (Chrome's stdio protocol: a 4-byte little-endian
// length, then that many bytes of UTF-8 JSON), used both between the browser
// and `agentd native-host` and between the host and the daemon's relay; plus
// where the relay's address and pairing token live in the data dir.

import { join } from "node:path";

/** Chrome refuses messages from a host larger than 1 MiB. */
export const HOST_TO_BROWSER_MAX = 1024 * 1024;
/** Our own cap on any one frame read (the browser allows up to 4 GiB). */
export const FRAME_READ_MAX = 64 * 1024 * 1024;

/** The native messaging host name the extension connects to. */
export const NATIVE_HOST_NAME = "dev.agentd.native_host";

export class FrameError extends Error {
  override name = "FrameError";
}

export function encodeFrame(
  message: unknown,
  maxBytes = FRAME_READ_MAX,
): Uint8Array {
  const body = new TextEncoder().encode(JSON.stringify(message));
  if (body.length > maxBytes) {
    throw new FrameError(
      `Message of ${body.length} bytes is over the ${maxBytes}-byte frame limit`,
    );
  }
  const frame = new Uint8Array(4 + body.length);
  new DataView(frame.buffer).setUint32(0, body.length, true);
  frame.set(body, 4);
  return frame;
}

/**
 * Reads frames from a byte stream. `read()` resolves with the next parsed
 * message, or undefined at a clean end of stream; a frame over `maxBytes` or
 * one that is not JSON throws (the peer does not speak the protocol).
 */
export class FrameReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  #maxBytes: number;
  #buffer = new Uint8Array(0);

  constructor(stream: ReadableStream<Uint8Array>, maxBytes = FRAME_READ_MAX) {
    this.#reader = stream.getReader();
    this.#maxBytes = maxBytes;
  }

  /** Changes the largest frame accepted from now on (a peer gets more once it is trusted). */
  set maxBytes(bytes: number) {
    this.#maxBytes = bytes;
  }

  /** The first bytes seen, for telling an HTTP request from a frame. */
  get pending(): Uint8Array {
    return this.#buffer;
  }

  async #fill(size: number): Promise<boolean> {
    while (this.#buffer.length < size) {
      const { done, value } = await this.#reader.read();
      if (done) return false;
      const joined = new Uint8Array(this.#buffer.length + value.length);
      joined.set(this.#buffer);
      joined.set(value, this.#buffer.length);
      this.#buffer = joined;
    }
    return true;
  }

  async read(): Promise<unknown> {
    if (!await this.#fill(4)) {
      if (this.#buffer.length === 0) return undefined;
      throw new FrameError("Stream ended inside a frame header");
    }
    const size = new DataView(this.#buffer.buffer, this.#buffer.byteOffset, 4)
      .getUint32(0, true);
    if (size > this.#maxBytes) {
      throw new FrameError(
        `Frame of ${size} bytes announced; the limit is ${this.#maxBytes} (not a native messaging peer?)`,
      );
    }
    if (!await this.#fill(4 + size)) {
      throw new FrameError(`Stream ended inside a ${size}-byte frame`);
    }
    const body = this.#buffer.subarray(4, 4 + size);
    this.#buffer = this.#buffer.slice(4 + size);
    try {
      return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
    } catch (error) {
      throw new FrameError(`Frame is not UTF-8 JSON: ${error}`);
    }
  }

  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}

/** Writes whole frames one at a time (frames from concurrent callers never interleave). */
export class FrameWriter {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #maxBytes: number;
  #queue: Promise<void> = Promise.resolve();

  constructor(stream: WritableStream<Uint8Array>, maxBytes = FRAME_READ_MAX) {
    this.#writer = stream.getWriter();
    this.#maxBytes = maxBytes;
  }

  write(message: unknown): Promise<void> {
    const frame = encodeFrame(message, this.#maxBytes);
    const next = this.#queue.then(() => this.#writer.write(frame));
    this.#queue = next.catch(() => {});
    return next;
  }

  async close(): Promise<void> {
    await this.#queue;
    await this.#writer.close().catch(() => {});
  }
}

/** A chrome-extension:// id: 32 letters a-p. */
export const EXTENSION_ID = /^[a-p]{32}$/;

/**
 * The id Chrome gives an extension whose manifest has this `key` (base64 of
 * the DER public key): SHA-256 of the key, first 32 hex digits, 0-f → a-p.
 */
export async function extensionIdFromKey(base64Key: string): Promise<string> {
  const der = Uint8Array.from(atob(base64Key), (char) => char.charCodeAt(0));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", der));
  return [...digest.subarray(0, 16)]
    .flatMap((byte) => [byte >> 4, byte & 15])
    .map((nibble) => String.fromCharCode(97 + nibble))
    .join("");
}

/** Where the relay says how to reach it, and the pairing token a host must present. */
export function relayFiles(
  dataDir: string,
): { address: string; token: string } {
  const dir = join(dataDir, "in-page");
  return {
    address: join(dir, "relay.json"),
    token: join(dir, "pairing_token"),
  };
}

/** The address file's content. */
export interface RelayAddress {
  port: number;
  pid: number;
  started: string;
}

export function isRelayAddress(value: unknown): value is RelayAddress {
  return typeof value === "object" && value !== null &&
    "port" in value && typeof value.port === "number" &&
    "pid" in value && typeof value.pid === "number" &&
    "started" in value && typeof value.started === "string";
}

/** The pairing token, created (0600) on first use and kept across restarts. */
export async function pairingToken(dataDir: string): Promise<string> {
  const { token } = relayFiles(dataDir);
  try {
    const existing = (await Deno.readTextFile(token)).trim();
    if (existing.length >= 32) return existing;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await Deno.mkdir(join(dataDir, "in-page"), { recursive: true, mode: 0o700 });
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const value = [...bytes].map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
  await Deno.writeTextFile(token, value, { mode: 0o600 });
  return value;
}
