// Identifiers `<prefix>_<ULID>`: sortable by creation time, so the store's key
// order is creation order, and upper case, so an id never reads as a name.

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** Monotonic within this process: ids made in the same millisecond still sort in order. */
export class IdSource {
  #lastTime = -1;
  #random = new Uint8Array(10);

  constructor(private readonly clock: () => number = Date.now) {}

  next(prefix: string): string {
    const now = this.clock();
    if (now <= this.#lastTime) {
      increment(this.#random);
    } else {
      this.#lastTime = now;
      crypto.getRandomValues(this.#random);
      this.#random[0] &= 0x7f; // leaves room to increment without overflow
    }
    return `${prefix}_${encodeTime(this.#lastTime)}${
      encodeRandom(this.#random)
    }`;
  }
}

export const ID_PATTERN = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/;

function increment(bytes: Uint8Array): void {
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] < 0xff) {
      bytes[i]++;
      return;
    }
    bytes[i] = 0;
  }
}

function encodeTime(time: number): string {
  let out = "";
  let value = time;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  let bits = 0n;
  for (const byte of bytes) bits = (bits << 8n) | BigInt(byte);
  let out = "";
  for (let i = 0; i < 16; i++) {
    out = ALPHABET[Number(bits & 31n)] + out;
    bits >>= 5n;
  }
  return out;
}
