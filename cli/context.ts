import type { ServerCatalog } from "../tools/registry.ts";
import type { StdioFront } from "./stdio_front.ts";

/** What main hands each command: the servers it may run and the process environment. */
export interface CliContext {
  /** Loaded on demand: a command reads only the server modules it runs. */
  servers: ServerCatalog;
  env: Record<string, string>;
  /** Human output (help, doctor); never used by `mcp` on stdio. */
  print(text: string): void;
  /** `mcp <server>` on stdio: the front answering until the server takes over. */
  stdioFront?: StdioFront;
}
