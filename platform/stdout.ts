// This process's stdout as the stdio MCP channel's sink. Deno writes stdout
// through Rust's line-buffered std::io::stdout: on a non-blocking descriptor
// (some clients hand one over) a full pipe makes a write fail after part of
// it went out and part sits in that buffer, so the count is lost and the
// frames after it come out cut or twice. Such a stdout is reopened as its own
// blocking description instead (Linux: /proc/self/fd/1 opens the pipe anew),
// written as unbuffered as any file. Elsewhere (no /proc) stdout is used as
// it is, and WouldBlock on it is reported as a write failure.

import type { ByteSink } from "./line_frames.ts";

const O_NONBLOCK = 0o4000;

/** Where stdout's flags and the descriptor itself are found (tests point them elsewhere). */
export interface StdoutPaths {
  fdinfo: string;
  fd: string;
}

const SELF: StdoutPaths = {
  fdinfo: "/proc/self/fdinfo/1",
  fd: "/proc/self/fd/1",
};

/**
 * stdout written synchronously, on this thread, as Node-compatible
 * `process.stdout` does: `Deno.stdout.write` hands each write to another
 * thread (twice the futex calls per answer), and a client that stops reading
 * stalls the server either way. A non-blocking stdout is reopened blocking
 * (`blockingStdout`); when it cannot be, a write meeting a full pipe fails
 * with an error that says why.
 */
export function stdoutSink(paths: StdoutPaths = SELF): ByteSink {
  const { file, problem } = blockingStdout(paths);
  const out = file ?? Deno.stdout;
  return {
    write(bytes) {
      try {
        return Promise.resolve(out.writeSync(bytes));
      } catch (error) {
        return Promise.reject(
          error instanceof Deno.errors.WouldBlock && problem
            ? new Error(`stdout is non-blocking: ${problem}`, { cause: error })
            : error,
        );
      }
    },
  };
}

/**
 * A blocking file on the same pipe when stdout is non-blocking; undefined
 * when stdout blocks already (or is a regular file, which never waits),
 * with `problem` saying why a non-blocking one could not be reopened.
 */
export function blockingStdout(
  paths: StdoutPaths = SELF,
): { file?: Deno.FsFile; problem?: string } {
  if (Deno.build.os !== "linux") return {};
  let info: string;
  try {
    info = Deno.readTextFileSync(paths.fdinfo);
  } catch {
    // No /proc (or no permission): take stdout as it is.
    return {};
  }
  const flags = Number.parseInt(
    /^flags:\s*([0-7]+)$/m.exec(info)?.[1] ?? "0",
    8,
  );
  if ((flags & O_NONBLOCK) === 0) return {};
  try {
    // A regular file reopened would start over at offset 0.
    if (Deno.statSync(paths.fd).isFile) return {};
    // The client is reading this pipe (it just started us), so the open does
    // not wait for a reader as a FIFO's would.
    return { file: Deno.openSync(paths.fd, { write: true }) };
  } catch (error) {
    // A socket cannot be reopened by path (ENXIO).
    return {
      problem: `could not reopen it blocking (${
        error instanceof Error ? error.message : String(error)
      })`,
    };
  }
}
