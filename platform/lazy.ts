// Imports a module when called. The specifier is computed on purpose: Deno
// reads the whole graph of every literal `import()` at start-up, not only of
// static imports, so a literal one would cost every command that module's
// graph. `typeof import(...)` at each call site keeps them type-checked.
// `deno compile` embeds only what it can see: every module loaded this way
// is named in lazy_modules.ts, whose paths the compile task passes to
// --include (tests/cli/lazy_modules_test.ts fails on one missing there).

export function lazy<M>(path: string, base: string): Promise<M> {
  return import(new URL(path, base).href);
}

/** A module imported on first use, and where it is. */
export interface LazyModule<M> {
  /** From the repository root ("cli/serve.ts"): deno compile's --include. */
  readonly path: string;
  load(): Promise<M>;
}

const ROOT = new URL("../", import.meta.url).href;

/** `specifier` (relative to `base`, as in `import`) as a module loaded on first use. */
export function lazyModule<M>(specifier: string, base: string): LazyModule<M> {
  const url = new URL(specifier, base).href;
  if (!url.startsWith(ROOT)) {
    throw new Error(`${url} is outside the repository (${ROOT})`);
  }
  return { path: url.slice(ROOT.length), load: () => lazy<M>(specifier, base) };
}
