// Shared by the benches that drive MCP servers with one SDK Client each
// (bench/transport_bench.ts, bench/gateway_bench.ts): the reference server's
// files, connecting over stdio, waiting for a child's port, checked tool
// calls. Spawned children are the caller's to register for clean-up
// (bench_lib.ts killOnExit). Not a bench itself (no `_bench` suffix).

import { join } from "node:path";
import { z } from "zod";
import { Client } from "../platform/mcp_sdk.ts";
import { StdioClientTransport } from "../platform/mcp_sdk_stdio_client.ts";
import { ROOT } from "./bench_lib.ts";

/** The MCP reference server @modelcontextprotocol/server-everything (pinned in deno.json). */
export const EVERYTHING_DIR = join(
  ROOT,
  "node_modules/@modelcontextprotocol/server-everything/",
);
export const EVERYTHING = join(EVERYTHING_DIR, "dist/index.js");
export const READY_TIMEOUT_MS = 60_000;

/** `version` of the package.json in `dir`. */
export function packageVersion(dir: string): string {
  return z.object({ version: z.string() }).parse(
    JSON.parse(Deno.readTextFileSync(join(dir, "package.json"))),
  ).version;
}

// ------------------------------------------------------------ checks

const ToolResult = z.object({
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  isError: z.boolean().optional(),
});

/** One tools/call; the first result is checked to be `expected` text. */
export function callOnce(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  expected: string,
): () => Promise<void> {
  let checked = false;
  return async () => {
    const result = await client.callTool({ name, arguments: args });
    if (checked) return;
    const parsed = ToolResult.safeParse(result);
    const text = parsed.success ? parsed.data.content[0]?.text : undefined;
    if (!parsed.success || parsed.data.isError === true || text !== expected) {
      throw new Error(`${name}: unexpected result ${JSON.stringify(result)}`);
    }
    checked = true;
  };
}

// ------------------------------------------------------------ connecting

/** Spawns `command` as a stdio MCP server and connects an SDK Client to it. */
export async function stdioClient(
  label: string,
  command: string,
  args: string[],
): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({
    command,
    args,
    cwd: ROOT,
    env: Deno.env.toObject(),
    stderr: "ignore",
  });
  const client = new Client({ name: "agentd-bench", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close(); // ends the child if it was spawned
    throw error;
  }
  const pid = transport.pid;
  if (pid === null) throw new Error(`${label}: no child process`);
  return { client, pid };
}

/** Reads a child's output lines until `match` finds the port, then keeps draining. */
export async function portFromOutput(
  label: string,
  output: ReadableStream<Uint8Array>,
  match: (line: string) => number | undefined,
): Promise<number> {
  const reader = output.pipeThrough(new TextDecoderStream()).getReader();
  const seen: string[] = [];
  let buffer = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `${label}: not listening after ${READY_TIMEOUT_MS} ms\n${
              seen.join("\n")
            }`,
          ),
        ),
      READY_TIMEOUT_MS,
    );
  });
  const find = async (): Promise<number> => {
    while (true) {
      const { value, done } = await reader.read();
      if (done) {
        throw new Error(
          `${label}: exited before listening\n${seen.join("\n")}`,
        );
      }
      buffer += value;
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        seen.push(line);
        const port = match(line);
        if (port !== undefined) return port;
        newline = buffer.indexOf("\n");
      }
    }
  };
  try {
    return await Promise.race([find(), timeout]);
  } finally {
    clearTimeout(timer);
    // Keep the pipe empty so logging never blocks the server.
    (async () => {
      while (!(await reader.read()).done) {
        // discard
      }
    })().catch(() => {});
  }
}

const ListeningLine = z.object({
  event: z.literal("listening"),
  port: z.number(),
});

/** agentd's `{"event":"listening","port":N}` log line. */
export function agentdPort(line: string): number | undefined {
  try {
    const parsed = ListeningLine.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data.port : undefined;
  } catch {
    return undefined;
  }
}

/** server-everything's "… listening on port N" (stderr, once it listens). */
export function everythingPort(line: string): number | undefined {
  const found = /listening on port (\d+)/.exec(line);
  return found ? Number(found[1]) : undefined;
}

export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}
