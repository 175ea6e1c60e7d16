// One wording for connection failures, whoever met them (probes, upstream
// connections, webhooks): "connection refused", "host not found", ...

import { messageOf } from "../../platform/errors.ts";

const FAILURES: [RegExp, string][] = [
  [/connection refused|ECONNREFUSED/i, "connection refused"],
  [/Not connected|Connection closed/i, "connection closed"],
  [
    /dns error|failed to lookup|name or service not known|no such host/i,
    "host not found",
  ],
  [/connection reset/i, "connection reset"],
  [/network is unreachable|no route to host/i, "network unreachable"],
  [/certificate|tls|ssl|handshake/i, "TLS handshake failed"],
];

/** Deno's fetch says "fetch failed" and hides the reason in a chain of causes. */
export function describeFailure(error: unknown): string {
  const messages: string[] = [];
  for (let e = error; e !== undefined && messages.length < 5;) {
    messages.push(messageOf(e));
    e = e instanceof Error ? e.cause : undefined;
  }
  const all = messages.join("; ");
  for (const [pattern, text] of FAILURES) {
    if (pattern.test(all)) return text;
  }
  if (/ENOENT/.test(all)) return cut(`cannot start: ${messages[0]}`);
  const inner = messages[messages.length - 1] ?? "unknown error";
  return cut(inner.replace(/^error sending request for url \([^)]*\): /, ""));
}

export function cut(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
