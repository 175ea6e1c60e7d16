// Where screenshot may write: only inside the allowed directories, checked on
// real paths so `..` and symbolic links cannot lead out of them.

import {
  basename,
  dirname,
  isAbsolute,
  join,
  relative,
  resolve,
  sep,
} from "node:path";
import { ToolError } from "../kit/mod.ts";

/** The real path of the deepest existing ancestor, plus the parts below it. */
async function realParts(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  while (true) {
    try {
      const real = await Deno.realPath(current);
      return missing.length ? join(real, ...missing.reverse()) : real;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      const parent = dirname(current);
      if (parent === current) return path;
      missing.push(current.slice(parent.length).replace(/^[\\/]+/, ""));
      current = parent;
    }
  }
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && !isAbsolute(rel) && rel.split(sep)[0] !== "..";
}

/**
 * The absolute file to write `requested` to: relative paths are taken from
 * the first allowed directory. Throws a ToolError when the file would land
 * outside every allowed directory, is a link or not a `.png`.
 */
export async function screenshotTarget(
  requested: string,
  allowed: readonly string[],
): Promise<string> {
  const where = `Cannot write the screenshot to "${requested}"`;
  if (!/\.png$/i.test(requested)) {
    throw new ToolError(`${where}: the file name must end in .png`);
  }
  if (allowed.length === 0) {
    throw new ToolError(
      `${where}: no screenshot directory is configured (screenshot_dirs)`,
    );
  }
  const target = resolve(allowed[0], requested);
  const realDirs = await Promise.all(allowed.map(realParts));
  const realTarget = join(await realParts(dirname(target)), basename(target));
  if (!realDirs.some((dir) => inside(dir, realTarget))) {
    throw new ToolError(
      `${where}: it resolves to ${realTarget}, outside the allowed directories (${
        allowed.join(", ")
      }). Pass a path inside one, or add a directory to screenshot_dirs in the browser-automation config`,
    );
  }
  try {
    const info = await Deno.lstat(realTarget);
    if (info.isSymlink) {
      throw new ToolError(`${where}: it is a symbolic link`);
    }
    if (!info.isFile) throw new ToolError(`${where}: it is not a file`);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return realTarget;
}
