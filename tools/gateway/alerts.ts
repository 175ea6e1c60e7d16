// Alerts when an upstream goes down or recovers, through the daemon's one
// alert mechanism (platform/alerts.ts): a log line and `alert_webhook`.

import { raiseAlert } from "../../platform/alerts.ts";
import type { Logger } from "../../platform/log.ts";
import type { Upstream } from "./upstream.ts";

export type AlertEvent = "upstream_down" | "upstream_recovered";

/** Raises the alert through platform/alerts.ts (log line, optional webhook). */
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
  raiseAlert(
    { log: options.log, webhook: options.webhook, fetchFn: options.fetchFn },
    body,
    event === "upstream_down" ? "problem" : "recovery",
  );
}
