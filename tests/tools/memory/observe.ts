// What an operator sees of a memory daemon in tests: alerts POSTed to a
// webhook, and samples of its Prometheus /metrics.

import type { Daemon } from "../../helpers.ts";

/** A webhook receiver for operator alerts. */
export function startWebhook(): {
  url: string;
  received: Record<string, unknown>[];
  [Symbol.asyncDispose](): Promise<void>;
} {
  const received: Record<string, unknown>[] = [];
  const http = Deno.serve({ port: 0, onListen() {} }, async (request) => {
    received.push(await request.json());
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/alerts/secret-path-0123456789`,
    received,
    [Symbol.asyncDispose]: () => http.shutdown(),
  };
}

/** One sample of a daemon's /metrics, by series name and label text. */
export async function metricValue(
  daemon: Daemon,
  series: string,
): Promise<number | undefined> {
  const text = await (await fetch(`${daemon.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}
