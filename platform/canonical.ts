// Canonical tool arguments: what a path or URL argument names once resolved,
// so the policy judges the file or address the tool will actually open, not
// one of its many spellings (`/a//b`, `/a/./b`, `a/../a`, a symbolic link,
// `HTTPS://Host:443/`). tools/kit/tool_call.ts canonicalises once, before
// the guard, and the handler runs with that same value.

import posix from "node:path/posix";
import win32 from "node:path/win32";

/** How a tool argument is canonicalised: `path` a file it opens, `url` an address it fetches or opens. */
export type ArgKind = "path" | "url";

/** The OS whose path rules apply (Deno.build.os); a parameter so every OS can be tested anywhere. */
export type OsName = typeof Deno.build.os;

/** Filesystems of macOS and Windows fold case by default: `~/.SSH` is `~/.ssh`. */
export function foldsCase(os: OsName): boolean {
  return os === "darwin" || os === "windows";
}

export interface PathOptions {
  /** Where a relative path starts (the tool's first allowed directory); relative paths stay as given without it. */
  base?: string;
  os?: OsName;
  /** Resolves symbolic links of an existing path (Deno.realPath); injectable for tests. */
  realPath?: (path: string) => Promise<string>;
}

/**
 * The absolute path a file tool opens for `raw`: taken from `base` when
 * relative, lexically normal (no `.`, `..` or doubled separators), and with
 * the symbolic links of its deepest existing ancestor resolved (a missing
 * file's name is kept below its real directory). The tools' own sandboxes
 * resolve the same way, so the value judged is the file opened.
 */
export async function canonicalPath(
  raw: string,
  options: PathOptions = {},
): Promise<string> {
  // A NUL or an empty path is the tool's to refuse, with its own message.
  if (raw === "" || raw.includes("\0")) return raw;
  const path = options.os === "windows" ? win32 : posix;
  let absolute: string;
  if (path.isAbsolute(raw)) absolute = path.resolve(raw);
  else if (options.base !== undefined) {
    absolute = path.resolve(options.base, raw);
  } else return raw;
  const realPath = options.realPath ?? Deno.realPath;
  const missing: string[] = [];
  let current = absolute;
  while (true) {
    try {
      const real = await realPath(current);
      return missing.length ? path.join(real, ...missing.reverse()) : real;
    } catch (error) {
      // Unreadable or looping: judge the lexical path; the tool fails on it anyway.
      if (!(error instanceof Deno.errors.NotFound)) return absolute;
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

/**
 * The URL a tool opens for `raw`, as the WHATWG parser (the browser's and
 * fetch's) serialises it: scheme and host lower case, default port dropped,
 * IPv4 forms like `0x7f.1` written out, `.` and `..` segments applied.
 * Unparseable input is returned as given (the tool refuses it).
 */
export function canonicalUrl(raw: string): string {
  try {
    return new URL(raw).href;
  } catch {
    return raw;
  }
}

const UNRESERVED = /%(2[DdEe]|3[0-9]|[46][1-9A-Fa-f]|[57][0-9Aa]|5[Ff]|7[Ee])/g;

/**
 * How the policy reads a canonical URL: without `user:password@` (a
 * credential, and not where the request goes), without the host's trailing
 * dot, and with percent-escapes of unreserved characters decoded and the
 * others' hex upper case, so `%61dmin` is `admin`.
 */
export function judgedUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  url.username = "";
  url.password = "";
  if (url.hostname.endsWith(".")) url.hostname = url.hostname.slice(0, -1);
  const escapes = (text: string) =>
    text.replace(/%[0-9a-fA-F]{2}/g, (escape) => escape.toUpperCase())
      .replace(
        UNRESERVED,
        (escape) => String.fromCharCode(parseInt(escape.slice(1), 16)),
      );
  if (url.host !== "") url.pathname = escapes(url.pathname);
  url.search = escapes(url.search);
  return url.href;
}

/** How the policy reads a canonical path: `/` separators, case folded where the OS folds it. */
export function judgedPath(value: string, os: OsName): string {
  const slashed = os === "windows" ? value.replaceAll("\\", "/") : value;
  return foldsCase(os) ? slashed.toLowerCase() : slashed;
}

/** An argument value as the policy matches it, for an argument of `kind`. */
export function judgedArg(value: string, kind: ArgKind, os: OsName): string {
  return kind === "path" ? judgedPath(value, os) : judgedUrl(value);
}

/**
 * A rule's glob for an argument of `kind`, spelled as the values it must
 * match are: a path glob lexically normal (doubled `/`, `/./` and a trailing
 * `/` removed) and folded like `judgedPath`; a URL glob with its scheme and
 * host lower case.
 */
export function judgedPattern(
  pattern: string,
  kind: ArgKind,
  os: OsName,
): string {
  if (kind === "url") {
    return pattern.replace(
      /^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/?#]*)/,
      (_, scheme: string, host: string) =>
        scheme.toLowerCase() + host.toLowerCase(),
    );
  }
  let path = judgedPath(pattern, os);
  path = path.replace(/\/{2,}/g, "/").replace(/\/(\.\/)+/g, "/")
    .replace(/\/\.$/, "");
  return path.length > 1 ? path.replace(/\/+$/, "") : path;
}

/**
 * The glob `pattern` with the symbolic links of its literal directory prefix
 * resolved (`/tmp/out/**` is `/private/tmp/out/**` on macOS), when that
 * differs: canonical paths are real, so a rule written with the link's
 * spelling must match them too. Undefined for globs that are not absolute
 * paths or whose prefix has no link.
 */
export async function realPattern(
  pattern: string,
  options: Pick<PathOptions, "realPath"> = {},
): Promise<string | undefined> {
  if (!pattern.startsWith("/")) return undefined;
  const segments = pattern.split("/");
  const glob = segments.findIndex((segment) => /[*?]/.test(segment));
  const literal = glob === -1 ? segments : segments.slice(0, glob);
  const prefix = literal.join("/") || "/";
  const real = await canonicalPath(prefix, options);
  if (real === posix.resolve(prefix)) return undefined;
  return glob === -1 ? real : posix.join(real, ...segments.slice(glob)).replace(
    /\/$/,
    pattern.endsWith("/") ? "/" : "",
  );
}
