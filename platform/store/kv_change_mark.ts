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
// The header's change counter (iChange) goes up by one with each commit
// (wal.c, walFrames), so a process can tell its own commits apart: when the
// counter read just before one of its commits and just after it differ by
// one, that commit is the only one in between (OwnCommits, KvStore). The
// counter is read from a header whose two copies agree, as SQLite's readers
// check: the writer fills the second copy first, then the first.
//
// The header is read through a shared read-only mapping of the file, as
// SQLite's own connections read it (mmap, ffi/libc.ts), so a read costs no
// system call; where the file cannot be mapped (Windows, no FFI permission)
// it is read with read(2), which goes through the page cache the mappings
// use. Any doubt (no file, a header not in the documented form, a short read,
// a torn read of a header being rewritten) gives a different or no mark,
// which only costs the caller its get.
//
// A mapping faults (SIGBUS) where it lies past the file's end, so a file is
// mapped only once it holds the header. SQLite shrinks the -shm only when the
// connection opening it is the first in any process (it alone then holds the
// "DMS" lock); a mark is read only while its store's connection is open,
// which keeps every other opener from being the first.
//
// Closing any descriptor of a file drops every POSIX lock the process holds
// on it, SQLite's locks on the -shm among them: another process would then
// take this one's connections for gone and rebuild the WAL-index under them
// (sqlite.org/howtocorrupt.html, 2.2). So a process opens one descriptor per
// -shm file, shared by every mark on it, and closes (and unmaps) it only when
// the last mark is closed, which KvStore does after closing its Deno.Kv.

import {
  MAP_SHARED,
  mapFailed,
  O_CLOEXEC,
  O_RDONLY,
  openLibc,
  PROT_READ,
  SEEK_END,
} from "../../ffi/libc.ts";

/** Reads the header of one open -shm file. */
interface ShmHeader {
  /** Fills `into` (READ_BYTES long) with both copies of the header; false when it cannot. */
  read(into: Uint8Array): boolean;
  close(): void;
}

/** The open -shm file of each KV file (real path) with marks open on it. */
const SHM_FILES = new Map<string, { header: ShmHeader; marks: number }>();

/** One copy of the WAL-index header. */
const HEADER_BYTES = 48;
/** Both copies, read together. */
const READ_BYTES = 2 * HEADER_BYTES;
/** Offset of iChange, the commit counter. */
const I_CHANGE = 8;
/** iVersion: the WAL-index format SQLite has written since 3.7.0. */
const WAL_INDEX_VERSION = 3007000;
/** Offset of isInit, 1 once the header is valid. */
const IS_INIT = 12;

export class KvChangeMark {
  readonly #shm: string | undefined;
  readonly #map: boolean;
  #header?: ShmHeader;
  #closed = false;
  #last = new Uint8Array(READ_BYTES);
  #next = new Uint8Array(READ_BYTES);
  #mark?: string;
  #serial = 0;

  /**
   * `path`: the KV file, as given to Deno.openKv, once open (symlinks are
   * resolved now, as SQLite does, so a later chdir changes nothing).
   * `map: false` reads with read(2) even where the file could be mapped (for
   * tests: the first mark opened on a file decides for every later one).
   */
  constructor(path: string, { map = true }: { map?: boolean } = {}) {
    this.#map = map;
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
    const header = this.#open();
    if (header === undefined) return undefined;
    const next = this.#next;
    if (!header.read(next)) return undefined;
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
    const change = changeOf(next, view);
    this.#mark = change === undefined
      ? `${++this.#serial}`
      : `${++this.#serial}.${change}`;
    return this.#mark;
  }

  /** Call after closing the Deno.Kv (see the top of this file). */
  close(): void {
    this.#closed = true;
    if (this.#header === undefined || this.#shm === undefined) return;
    this.#header = undefined;
    const shared = SHM_FILES.get(this.#shm);
    if (shared === undefined || --shared.marks > 0) return;
    SHM_FILES.delete(this.#shm);
    shared.header.close();
  }

  #open(): ShmHeader | undefined {
    if (this.#header !== undefined || this.#closed) return this.#header;
    if (this.#shm === undefined) return undefined;
    const shared = SHM_FILES.get(this.#shm);
    if (shared !== undefined) {
      shared.marks++;
      this.#header = shared.header;
      return this.#header;
    }
    // None when the file is not yet created (no read so far) or the KV is not
    // a WAL database.
    const header = (this.#map ? MappedHeader.open(this.#shm) : undefined) ??
      FileHeader.open(this.#shm);
    if (header === undefined) return undefined;
    this.#header = header;
    SHM_FILES.set(this.#shm, { header, marks: 1 });
    return header;
  }
}

/** The header read with read(2) from a descriptor kept open. */
class FileHeader implements ShmHeader {
  private constructor(private readonly file: Deno.FsFile) {}

  static open(path: string): FileHeader | undefined {
    try {
      return new FileHeader(Deno.openSync(path, { read: true }));
    } catch {
      return undefined;
    }
  }

  read(into: Uint8Array): boolean {
    let filled = 0;
    try {
      this.file.seekSync(0, Deno.SeekMode.Start);
      while (filled < READ_BYTES) {
        const n = this.file.readSync(into.subarray(filled));
        if (n === null || n === 0) return false;
        filled += n;
      }
    } catch {
      return false;
    }
    return true;
  }

  close(): void {
    this.file.close();
  }
}

/** The header read from a shared read-only mapping of the file's first bytes. */
class MappedHeader implements ShmHeader {
  #bytes?: Uint8Array;
  #pointer: Deno.PointerValue = null;

  private constructor(private readonly fd: number) {}

  static open(path: string): MappedHeader | undefined {
    const libc = openLibc();
    if (libc === null) return undefined;
    const fd = libc.open(
      new TextEncoder().encode(`${path}\0`),
      O_RDONLY | O_CLOEXEC,
    );
    return fd < 0 ? undefined : new MappedHeader(fd);
  }

  read(into: Uint8Array): boolean {
    const bytes = this.#bytes ?? this.#mapped();
    if (bytes === undefined) return false;
    into.set(bytes);
    return true;
  }

  /** The mapping, made once the file holds a whole header (see the top). */
  #mapped(): Uint8Array | undefined {
    const libc = openLibc();
    if (libc === null) return undefined;
    if (libc.lseek(this.fd, 0n, SEEK_END) < BigInt(READ_BYTES)) {
      return undefined;
    }
    const pointer = libc.mmap(
      null,
      BigInt(READ_BYTES),
      PROT_READ,
      MAP_SHARED,
      this.fd,
      0n,
    );
    if (mapFailed(pointer) || pointer === null) return undefined;
    this.#pointer = pointer;
    this.#bytes = new Uint8Array(
      Deno.UnsafePointerView.getArrayBuffer(pointer, READ_BYTES),
    );
    return this.#bytes;
  }

  close(): void {
    const libc = openLibc();
    if (libc === null) return;
    // The last mark on the file is closed: nothing reads the bytes again.
    this.#bytes = undefined;
    if (this.#pointer !== null) {
      libc.munmap(this.#pointer, BigInt(READ_BYTES));
    }
    this.#pointer = null;
    libc.close(this.fd);
  }
}

/** Own commits remembered: a reader further behind gets. */
const OWN_COMMITS = 256;
/** Keys kept per commit; a larger commit counts as one that may have written any key. */
const OWN_COMMIT_KEYS = 128;

/**
 * One store's own commits, by the commit counter value each one took, with
 * the ids of the keys it wrote. A commit is pinned to the store only when
 * the counter moved by exactly one across it; with another commit in its
 * window (another process's, or one more of this store's) the value that
 * is not pinned keeps every reader across it getting.
 */
export class OwnCommits {
  /** Counter value -> ids of the keys written (null: too many to keep); oldest first. */
  #wrote = new Map<number, Set<string> | null>();

  /**
   * `before`/`after`: the marks read just before the commit was sent and
   * just after it was answered (undefined: none, or the commit failed).
   * True when the commit was pinned: `after` is then the state it left.
   */
  pin(
    before: string | undefined,
    after: string | undefined,
    ids: readonly string[],
  ): boolean {
    const first = before === undefined ? undefined : markChange(before);
    const last = after === undefined ? undefined : markChange(after);
    if (
      first === undefined || last === undefined ||
      last !== ((first + 1) >>> 0)
    ) return false;
    this.#wrote.set(last, ids.length > OWN_COMMIT_KEYS ? null : new Set(ids));
    if (this.#wrote.size > OWN_COMMITS) {
      for (const oldest of this.#wrote.keys()) {
        this.#wrote.delete(oldest);
        break;
      }
    }
    return true;
  }

  /** Whether every commit between two marks is pinned here and none wrote the key `id`. */
  unchangedBetween(from: string, to: string, id: string): boolean {
    const first = markChange(from);
    const last = markChange(to);
    if (first === undefined || last === undefined) return false;
    const span = (last - first) >>> 0;
    if (span > OWN_COMMITS) return false;
    for (let i = 1; i <= span; i++) {
      const wrote = this.#wrote.get((first + i) >>> 0);
      if (wrote === undefined || wrote === null || wrote.has(id)) return false;
    }
    return true;
  }
}

/** The commit counter of a mark (undefined: the header was not read whole). */
export function markChange(mark: string): number | undefined {
  const dot = mark.indexOf(".");
  return dot < 0 ? undefined : Number(mark.slice(dot + 1));
}

/** iChange, when both copies of the header agree (else a writer is mid-way). */
function changeOf(bytes: Uint8Array, view: DataView): number | undefined {
  for (let i = 0; i < HEADER_BYTES; i++) {
    if (bytes[i] !== bytes[HEADER_BYTES + i]) return undefined;
  }
  // Native byte order, as iVersion (checked both ways by the caller) shows.
  const little = view.getUint32(0, true) === WAL_INDEX_VERSION;
  return view.getUint32(I_CHANGE, little);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < READ_BYTES; i++) if (a[i] !== b[i]) return false;
  return true;
}
