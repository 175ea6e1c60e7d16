// Imports a module when called. The specifier is computed on purpose: Deno
// reads the whole graph of every literal `import()` at start-up, not only of
// static imports, so a literal one would cost every command that module's
// graph. `deno compile` gets these modules through --include (deno.json);
// `typeof import(...)` at each call site keeps them type-checked.

export function lazy<M>(path: string, base: string): Promise<M> {
  return import(new URL(path, base).href);
}
