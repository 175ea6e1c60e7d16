// Deno.dlopen symbol table for the few C library calls Deno has no API for:
// mapping a file into memory (platform/store/kv_change_mark.ts reads SQLite's
// shared WAL-index header through a mapping, where read(2) cost a system call,
// ~5 µs here, on every GET that asks whether the store changed), and asking
// whether a process exists (kill with signal 0: platform/browser.ts).

const libcSymbols = {
  open: { parameters: ["buffer", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  lseek: { parameters: ["i32", "i64", "i32"], result: "i64" },
  mmap: {
    parameters: ["pointer", "usize", "i32", "i32", "i32", "i64"],
    result: "pointer",
  },
  munmap: { parameters: ["pointer", "usize"], result: "i32" },
  kill: { parameters: ["i32", "i32"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

export type Libc = Deno.DynamicLibrary<typeof libcSymbols>["symbols"];

// The same values on Linux and macOS, O_CLOEXEC aside.
export const O_RDONLY = 0;
export const O_CLOEXEC = Deno.build.os === "darwin" ? 0x1000000 : 0x80000;
export const PROT_READ = 1;
export const MAP_SHARED = 1;
export const SEEK_END = 2;

let libc: Libc | null | undefined;

/**
 * The C library, opened once; null where there is none to map files with
 * (Windows), FFI is not permitted, or it fails to open.
 */
export function openLibc(): Libc | null {
  if (libc !== undefined) return libc;
  const name = Deno.build.os === "linux"
    ? "libc.so.6"
    : Deno.build.os === "darwin"
    ? "libSystem.B.dylib"
    : undefined;
  libc = null;
  if (name === undefined) return libc;
  try {
    // Asked, not requested: a process without --allow-ffi must not prompt.
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") {
      return libc;
    }
    libc = Deno.dlopen(name, libcSymbols).symbols;
  } catch {
    libc = null;
  }
  return libc;
}

/** Whether mmap answered MAP_FAILED ((void *) -1) rather than an address. */
export function mapFailed(pointer: Deno.PointerValue): boolean {
  if (pointer === null) return true;
  const value = BigInt(Deno.UnsafePointer.value(pointer));
  return value === -1n || value === 0xffff_ffff_ffff_ffffn;
}

/**
 * Whether a process with this id exists and may be signalled by this one
 * (kill(pid, 0)); undefined when that cannot be asked (no C library to call).
 * A process of another user counts as absent: the daemons that ask run as
 * one user.
 */
export function processAlive(pid: number): boolean | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const c = openLibc();
  if (c === null) return undefined;
  return c.kill(pid, 0) === 0;
}
