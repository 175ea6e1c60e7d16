import type { Logger } from "../platform/log.ts";
import { StartupError } from "./boot.ts";

/** Deno.serve with a readable error for a busy port and a `listening` log line tests can wait for. */
export function listen(
  handler: (request: Request) => Response | Promise<Response>,
  options: { host: string; port: number; log: Logger; servers: string[] },
): Deno.HttpServer {
  try {
    return Deno.serve({
      hostname: options.host,
      port: options.port,
      onListen: ({ hostname, port }) => {
        const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
        options.log.info("listening", {
          url: `http://${shown}:${port}`,
          host: hostname,
          port,
          servers: options.servers,
        });
      },
    }, handler);
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      throw new StartupError(
        `port ${options.port} on ${options.host} is already in use (another agentd?). ` +
          `Stop it, or pass --port N.`,
      );
    }
    if (error instanceof Deno.errors.AddrNotAvailable) {
      throw new StartupError(
        `cannot bind ${options.host}: no such address on this machine`,
      );
    }
    throw error;
  }
}
