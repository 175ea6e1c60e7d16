// The file sandbox of file_read/file_write: deny by default, only inside the
// configured roots, checked on real paths before and after opening (so `..`
// and symbolic links cannot lead out), atomic writes, bounded sizes.

import { basename, dirname, isAbsolute, join, normalize, sep } from "node:path";

export class SandboxError extends Error {
  override name = "SandboxError";
}

export interface SandboxOptions {
  roots: readonly string[];
  maxReadBytes: number;
  maxWriteBytes: number;
}

export interface ReadResult {
  path: string;
  bytes: number;
  content: string;
  encoding: "utf-8" | "base64";
}

export interface WriteResult {
  path: string;
  bytes: number;
  created: boolean;
}

function within(path: string, root: string): boolean {
  return path === root ||
    path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function sameFile(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

export class FileSandbox {
  readonly #options: SandboxOptions;
  /** Configured roots, resolved to real paths (missing ones are left out). */
  #roots: string[] | undefined;
  readonly missingRoots: string[] = [];

  constructor(options: SandboxOptions) {
    this.#options = options;
  }

  get configuredRoots(): readonly string[] {
    return this.#options.roots;
  }

  async #realRoots(): Promise<string[]> {
    if (this.#roots) return this.#roots;
    const roots: string[] = [];
    for (const root of this.#options.roots) {
      try {
        roots.push(await Deno.realPath(root));
      } catch {
        this.missingRoots.push(root);
      }
    }
    this.#roots = roots;
    return roots;
  }

  /** Where relative paths start: the first allowed root that exists, as a real path. */
  async relativeBase(): Promise<string | undefined> {
    return (await this.#realRoots())[0];
  }

  /** The absolute, lexically normal path asked for; refuses `..`, NUL and, without roots, everything. */
  async #requested(path: string, field = "path"): Promise<string> {
    const roots = await this.#realRoots();
    if (roots.length === 0) {
      throw new SandboxError(
        "File access is off: no allowed roots are configured. Set desktop-control allowed_roots " +
          '(config file `{"desktop-control": {"allowed_roots": ["/home/me/work"]}}` or ' +
          "AGENTD_DESKTOP_CONTROL__ALLOWED_ROOTS=/home/me/work).",
      );
    }
    if (path.includes("\0")) {
      throw new SandboxError(`${field} contains a NUL character`);
    }
    if (path.split(/[\\/]/).includes("..")) {
      throw new SandboxError(
        `${field} "${path}" contains "..": give a path inside an allowed root without parent steps`,
      );
    }
    const absolute = isAbsolute(path) ? normalize(path) : join(roots[0], path);
    return absolute;
  }

  async #assertInside(real: string, asked: string): Promise<void> {
    const roots = await this.#realRoots();
    if (!roots.some((root) => within(real, root))) {
      throw new SandboxError(
        `"${asked}" is outside the allowed roots (${roots.join(", ")})` +
          (real !== normalize(asked) && isAbsolute(asked)
            ? ` once resolved to "${real}" (a symbolic link?)`
            : ""),
      );
    }
  }

  async read(path: string): Promise<ReadResult> {
    const requested = await this.#requested(path);
    let real: string;
    try {
      real = await Deno.realPath(requested);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        // Report a missing file inside a root as such, outside as outside.
        await this.#assertInside(await this.#realParent(requested), path);
        throw new SandboxError(`No such file: "${path}"`);
      }
      throw error;
    }
    await this.#assertInside(real, path);
    using file = await Deno.open(real, { read: true });
    const info = await file.stat();
    if (!info.isFile) throw new SandboxError(`"${path}" is not a regular file`);
    if (info.size > this.#options.maxReadBytes) {
      throw new SandboxError(
        `"${path}" is ${info.size} bytes, over the ${this.#options.maxReadBytes}-byte read limit (max_read_bytes)`,
      );
    }
    // After opening: the path must still name the file we opened, inside a root.
    const again = await Deno.realPath(requested);
    await this.#assertInside(again, path);
    if (!sameFile(info, await Deno.stat(again))) {
      throw new SandboxError(
        `"${path}" changed while it was opened; try again`,
      );
    }
    const bytes = new Uint8Array(info.size);
    let offset = 0;
    while (offset < bytes.length) {
      const read = await file.read(bytes.subarray(offset));
      if (read === null) break;
      offset += read;
    }
    const data = bytes.subarray(0, offset);
    try {
      const content = new TextDecoder("utf-8", { fatal: true }).decode(data);
      return { path: real, bytes: data.length, content, encoding: "utf-8" };
    } catch {
      return {
        path: real,
        bytes: data.length,
        content: btoa(Array.from(data, (b) => String.fromCharCode(b)).join("")),
        encoding: "base64",
      };
    }
  }

  async #realParent(requested: string): Promise<string> {
    try {
      return join(await Deno.realPath(dirname(requested)), basename(requested));
    } catch {
      return requested;
    }
  }

  /** Writes `content` atomically: a temporary file in the same directory, synced, then renamed over. */
  async write(path: string, content: string): Promise<WriteResult> {
    const data = new TextEncoder().encode(content);
    if (data.length > this.#options.maxWriteBytes) {
      throw new SandboxError(
        `content is ${data.length} bytes, over the ${this.#options.maxWriteBytes}-byte write limit (max_write_bytes)`,
      );
    }
    const requested = await this.#requested(path);
    let parent: string;
    try {
      parent = await Deno.realPath(dirname(requested));
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) {
        throw new SandboxError(
          `The directory of "${path}" does not exist; file_write does not create directories`,
        );
      }
      throw error;
    }
    let target = join(parent, basename(requested));
    await this.#assertInside(target, path);
    let created = true;
    let mode = 0o644;
    try {
      const link = await Deno.lstat(target);
      if (link.isSymlink) {
        // Writing through a link: its real target must be inside a root too.
        target = await Deno.realPath(target);
        await this.#assertInside(target, path);
      }
      const info = await Deno.stat(target);
      if (!info.isFile) {
        throw new SandboxError(`"${path}" exists and is not a regular file`);
      }
      created = false;
      mode = (info.mode ?? 0o644) & 0o7777;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      // A dangling symlink: where would it lead?
      try {
        if ((await Deno.lstat(target)).isSymlink) {
          throw new SandboxError(
            `"${path}" is a symbolic link to a missing file; refusing to write through it`,
          );
        }
      } catch (inner) {
        if (!(inner instanceof Deno.errors.NotFound)) throw inner;
      }
    }
    const directory = dirname(target);
    const temporary = join(
      directory,
      `.${basename(target)}.${crypto.randomUUID().slice(0, 8)}.tmp`,
    );
    try {
      {
        using file = await Deno.open(temporary, {
          write: true,
          createNew: true,
          mode,
        });
        let offset = 0;
        while (offset < data.length) {
          offset += await file.write(data.subarray(offset));
        }
        await file.syncData();
      }
      // After opening: the directory must still resolve inside a root.
      await this.#assertInside(await Deno.realPath(directory), path);
      await Deno.rename(temporary, target);
    } catch (error) {
      await Deno.remove(temporary).catch(() => {});
      throw error;
    }
    return { path: target, bytes: data.length, created };
  }
}
