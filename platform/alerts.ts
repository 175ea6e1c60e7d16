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
  /** How long a webhook POST may take (default 5 s). */
  timeoutMs?: number;
}

/**
 * Raises one alert: `body.event` names it (`upstream_down`,
 * `memory_storage_unavailable`…). Problems log at warn, recoveries at info.
 * The webhook POST runs in the background; its failure is logged, never
 * thrown. The returned promise settles when the POST is done (shutdown and
 * tests may wait for it); it never rejects.
 */
export function raiseAlert(
  target: AlertTarget,
  body: { event: string; [field: string]: unknown },
  severity: "problem" | "recovery",
): Promise<void> {
  const { log, webhook } = target;
  if (severity === "problem") log.warn("alert", body);
  else log.info("alert", body);
  if (webhook === undefined) return Promise.resolve();
  const host = URL.parse(webhook)?.host ?? "(invalid URL)";
  const fetchFn = target.fetchFn ?? fetch;
  return fetchFn(webhook, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(target.timeoutMs ?? WEBHOOK_TIMEOUT_MS),
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
