import type { AnyServerSpec } from "../tools/kit/mod.ts";

/** What main hands each command: the servers it may run and the process environment. */
export interface CliContext {
  specs: readonly AnyServerSpec[];
  env: Record<string, string>;
  /** Human output (help, doctor); never used by `mcp` on stdio. */
  print(text: string): void;
}
