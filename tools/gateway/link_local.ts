// Link-local addresses (169.254.0.0/16, fe80::/10) hold cloud metadata
// services (instance credentials at 169.254.169.254) and never an MCP server,
// so register_server refuses them for every caller; loopback stays allowed
// (local servers live there). A name is checked against what the DNS answers
// at registration: a name that changes its answer later is not caught here;
// asking a person before an agent registers a server is the real gate.

import { withDeadline } from "./deadlines.ts";

/**
 * Why `url` may not be registered, or undefined when it may. A DNS that does
 * not answer within `timeoutMs` (`dns_timeout_ms`) rejects with a
 * DeadlineExceeded: the check fails closed, never open.
 */
export async function linkLocalTarget(
  url: URL,
  options: {
    timeoutMs: number;
    resolve?: (host: string, signal: AbortSignal) => Promise<string[]>;
  },
): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (isLinkLocal(host)) return `${host} is a link-local address`;
  if (isIpLiteral(host)) return undefined;
  const controller = new AbortController();
  const addresses = await withDeadline(
    // A name that does not resolve passes: the connection then fails on its own.
    (options.resolve ?? resolveHost)(host, controller.signal).catch(() => []),
    {
      step: `the DNS lookup of ${host}`,
      ms: options.timeoutMs,
      setting: "dns_timeout_ms",
    },
  ).finally(() => controller.abort());
  const local = addresses.find(isLinkLocal);
  return local === undefined
    ? undefined
    : `${host} resolves to the link-local address ${local}`;
}

/** 169.254.0.0/16, fe80::/10, and IPv4-mapped IPv6 forms of the former. */
export function isLinkLocal(address: string): boolean {
  const v4 = address.match(/^(\d+)\.(\d+)\.\d+\.\d+$/);
  if (v4) return v4[1] === "169" && v4[2] === "254";
  const lower = address.toLowerCase();
  if (/^fe[89ab][0-9a-f]:/.test(lower)) return true;
  // ::ffff:169.254.x.x, which URL parsing writes as ::ffff:a9fe:xxxx.
  const mapped = lower.match(/^(?:0*:)*:?ffff:(.+)$/);
  if (!mapped?.[1]) return false;
  const tail = mapped[1];
  return tail.includes(".") ? isLinkLocal(tail) : /^a9fe:/.test(tail);
}

function isIpLiteral(host: string): boolean {
  return /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.includes(":");
}

/** A and AAAA answers; none when the name does not resolve (the connection then fails on its own). */
async function resolveHost(
  host: string,
  signal: AbortSignal,
): Promise<string[]> {
  const answers = await Promise.all(
    (["A", "AAAA"] as const).map((type) =>
      Deno.resolveDns(host, type, { signal }).catch(() => [])
    ),
  );
  return answers.flat();
}
