// Whether any process has committed to a Deno KV file since a moment, told by
// one 48-byte read instead of a KV get. Deno KV keeps its data in SQLite in
// WAL mode, and every SQLite connection to the file, in any process, shares
// the WAL-index in `<file>-shm`. Its header (https://www.sqlite.org/walformat.html,
// "The WAL-Index Header") holds a change counter, the last valid frame, the
// salts and the checksums; a write transaction rewrites it before its commit
// returns, and a reader's snapshot is taken from it. So when two reads of the
// header are equal, no commit finished between them, and a get begun after the
// first read saw every commit finished before the second.
//
// The file is read with read(2), which goes through the page cache the
// connections' shared mappings use. Any doubt (no file, a header not in the
// documented form, a short read, a torn read of a header being rewritten)
// gives a different or no mark, which only costs the caller its get.
//
// Closing any descriptor of a file drops every POSIX lock the process holds
// on it, SQLite's locks on the -shm among them: another process would then
// take this one's connections for gone and rebuild the WAL-index under them
// (sqlite.org/howtocorrupt.html, 2.2). So a process opens one descriptor per
// -shm file, shared by every mark on it, and closes it only when the last
// mark is closed, which KvStore does after closing its Deno.Kv.

/** The -shm descriptor of each KV file (real path) with marks open on it. */
const SHM_FILES = new Map<string, { file: Deno.FsFile; marks: number }>();

/** The first copy of the WAL-index header. */
const HEADER_BYTES = 48;
/** iVersion: the WAL-index format SQLite has written since 3.7.0. */
const WAL_INDEX_VERSION = 3007000;
/** Offset of isInit, 1 once the header is valid. */
const IS_INIT = 12;

export class KvChangeMark {
  readonly #shm: string | undefined;
  #file?: Deno.FsFile;
  #closed = false;
  #last = new Uint8Array(HEADER_BYTES);
  #next = new Uint8Array(HEADER_BYTES);
  #mark?: string;
  #serial = 0;

  /**
   * `path`: the KV file, as given to Deno.openKv, once open (symlinks are
   * resolved now, as SQLite does, so a later chdir changes nothing).
   */
  constructor(path: string) {
    try {
      this.#shm = `${Deno.realPathSync(path)}-shm`;
    } catch {
      this.#shm = undefined; // no file: never a mark
    }
  }

  /**
   * A token that differs from every earlier one once a commit to the file has
   * finished since it was taken; undefined when the header cannot be read.
   */
  read(): string | undefined {
    const file = this.#open();
    if (file === undefined) return undefined;
    const next = this.#next;
    let filled = 0;
    try {
      file.seekSync(0, Deno.SeekMode.Start);
      while (filled < HEADER_BYTES) {
        const n = file.readSync(next.subarray(filled));
        if (n === null || n === 0) return undefined;
        filled += n;
      }
    } catch {
      return undefined;
    }
    const view = new DataView(next.buffer);
    if (
      view.getUint32(0, true) !== WAL_INDEX_VERSION &&
      view.getUint32(0, false) !== WAL_INDEX_VERSION
    ) return undefined;
    if (next[IS_INIT] !== 1) return undefined;
    if (this.#mark !== undefined && sameBytes(next, this.#last)) {
      return this.#mark;
    }
    this.#next = this.#last;
    this.#last = next;
    // A new token per distinct header read: equal tokens mean equal, consecutive reads.
    this.#mark = `${++this.#serial}`;
    return this.#mark;
  }

  /** Call after closing the Deno.Kv (see the top of this file). */
  close(): void {
    this.#closed = true;
    if (this.#file === undefined || this.#shm === undefined) return;
    this.#file = undefined;
    const shared = SHM_FILES.get(this.#shm);
    if (shared === undefined || --shared.marks > 0) return;
    SHM_FILES.delete(this.#shm);
    shared.file.close();
  }

  #open(): Deno.FsFile | undefined {
    if (this.#file !== undefined || this.#closed) return this.#file;
    if (this.#shm === undefined) return undefined;
    const shared = SHM_FILES.get(this.#shm);
    if (shared !== undefined) {
      shared.marks++;
      this.#file = shared.file;
      return this.#file;
    }
    try {
      this.#file = Deno.openSync(this.#shm, { read: true });
    } catch {
      return undefined; // not yet created (no read so far), or not a WAL database
    }
    SHM_FILES.set(this.#shm, { file: this.#file, marks: 1 });
    return this.#file;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < HEADER_BYTES; i++) if (a[i] !== b[i]) return false;
  return true;
}
