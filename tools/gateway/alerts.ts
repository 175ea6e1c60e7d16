// Alerts when an upstream goes down or recovers: a log line, and a JSON POST
// to `alert_webhook` when one is configured.

import type { Logger } from "../../platform/log.ts";
import { describeFailure } from "./failures.ts";
import type { Upstream } from "./upstream.ts";

export type AlertEvent = "upstream_down" | "upstream_recovered";

const WEBHOOK_TIMEOUT_MS = 5000;

/** Logs the alert and POSTs it to the configured webhook (the URL itself is never logged: it is often a secret). */
export function alert(
  event: AlertEvent,
  upstream: Upstream,
  options: {
    /** Members of the upstream's group, itself included. */
    replicas: readonly Upstream[];
    webhook: string | undefined;
    log: Logger;
    fetchFn?: typeof fetch;
  },
): void {
  const { log, webhook } = options;
  const body = {
    event,
    upstream: upstream.name,
    group: upstream.group,
    state: upstream.state,
    since: new Date(upstream.since).toISOString(),
    error: upstream.lastError ?? null,
    replicas_healthy:
      options.replicas.filter((member) => member.state === "healthy").length,
  };
  if (event === "upstream_down") log.warn("alert", body);
  else log.info("alert", body);
  if (webhook === undefined) return;
  const fetchFn = options.fetchFn ?? fetch;
  fetchFn(webhook, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
  }).then(async (response) => {
    await response.body?.cancel();
    if (!response.ok) {
      log.warn("alert_webhook_failed", {
        status: response.status,
        webhook_host: new URL(webhook).host,
      });
    }
  }).catch((error) =>
    log.warn("alert_webhook_failed", {
      error: describeFailure(error),
      webhook_host: new URL(webhook).host,
    })
  );
}
