// Operator alerts, one mechanism for every server: an `alert` log line, and a
// JSON POST to a configured webhook (`alert_webhook`) when there is one.

import { messageOf } from "./errors.ts";
import type { Logger } from "./log.ts";

const WEBHOOK_TIMEOUT_MS = 5000;

export interface AlertTarget {
  log: Logger;
  /** POSTed the alert as JSON; the URL itself is never logged (it is often a secret). */
  webhook?: string | undefined;
  fetchFn?: typeof fetch;
}

/**
 * Raises one alert: `body.event` names it (`upstream_down`,
 * `memory_storage_unavailable`…). Problems log at warn, recoveries at info.
 * The webhook POST runs in the background; its failure is logged, never thrown.
 */
export function raiseAlert(
  target: AlertTarget,
  body: { event: string; [field: string]: unknown },
  severity: "problem" | "recovery",
): void {
  const { log, webhook } = target;
  if (severity === "problem") log.warn("alert", body);
  else log.info("alert", body);
  if (webhook === undefined) return;
  const host = URL.parse(webhook)?.host ?? "(invalid URL)";
  const fetchFn = target.fetchFn ?? fetch;
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
        webhook_host: host,
      });
    }
  }).catch((error: unknown) =>
    log.warn("alert_webhook_failed", {
      error: messageOf(error),
      webhook_host: host,
    })
  );
}
