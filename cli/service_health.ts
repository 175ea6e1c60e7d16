// `agentd service status`'s look at the daemon itself: where the installed
// service listens (its flags over its config over defaults) and one short
// GET /health, for when the service manager cannot be asked.

import { parseFlags, serveFlags } from "./args.ts";
import { serveSettings } from "./boot.ts";
import type { CliContext } from "./context.ts";
import { isRecord } from "../platform/validation.ts";

/** Where the installed daemon listens: its serve flags over its config file over defaults. */
export async function daemonAddress(
  serveArgs: string[],
  ctx: CliContext,
): Promise<{ host: string; port: number }> {
  try {
    const { values } = parseFlags("serve", serveArgs, serveFlags);
    const settings = await serveSettings(values, await ctx.servers.load(), {});
    return { host: settings.base.host, port: settings.base.port };
  } catch {
    const at = serveArgs.indexOf("--port");
    const port = Number(at === -1 ? "8765" : serveArgs[at + 1]);
    return { host: "127.0.0.1", port: Number.isInteger(port) ? port : 8765 };
  }
}

/** One short GET /health of the installed daemon, summarised for `service status`. */
export async function probeHealth(
  address: { host: string; port: number },
  token: string | undefined,
): Promise<{ answered: boolean; summary: string }> {
  if (address.port === 0) {
    return {
      answered: false,
      summary: "not checked: the service listens on any free port (--port 0)",
    };
  }
  // A wildcard bind answers on loopback.
  const host = address.host === "0.0.0.0"
    ? "127.0.0.1"
    : address.host === "::"
    ? "::1"
    : address.host;
  const url = `http://${
    host.includes(":") ? `[${host}]` : host
  }:${address.port}/health`;
  try {
    const response = await fetch(url, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(2_000),
    });
    const body: unknown = await response.json().catch(() => undefined);
    if (response.status === 401 || response.status === 403) {
      return {
        answered: true,
        summary:
          `${url} answers ${response.status}: set AGENTD_TOKEN to see its health`,
      };
    }
    return {
      answered: true,
      summary: `${url}: ${describeHealth(body, response.status)}`,
    };
  } catch (error) {
    const why = error instanceof DOMException && error.name === "TimeoutError"
      ? "no answer within 2s"
      : "nothing answers";
    return { answered: false, summary: `${url}: ${why}` };
  }
}

function describeHealth(body: unknown, status: number): string {
  if (!isRecord(body)) return `HTTP ${status}, not an agentd /health body`;
  const parts = [String(body.status ?? `HTTP ${status}`)];
  if (typeof body.version === "string") parts.push(`agentd ${body.version}`);
  if (typeof body.uptime_s === "number") parts.push(`up ${body.uptime_s}s`);
  const servers = isRecord(body.servers)
    ? Object.entries(body.servers).map(([id, server]) =>
      `${id} ${isRecord(server) ? String(server.phase ?? "?") : "?"}`
    )
    : [];
  return `${parts.join(", ")}${
    servers.length ? `; servers: ${servers.join(", ")}` : ""
  }`;
}
