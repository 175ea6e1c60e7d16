// Operator alerts: an error log line, and a JSON POST to the configured
// webhook when there is one. (The gateway has the same; to be unified in
// platform/alerts.ts.)

import type { Logger } from "../../platform/log.ts";
import { messageOf } from "../../platform/errors.ts";

export interface Alerts {
  raise(event: string, fields: Record<string, string | number>): void;
  /** Waits for webhook posts still on their way. */
  settle(): Promise<void>;
}

export function createAlerts(options: {
  log: Logger;
  webhook?: string;
  timeoutMs: number;
}): Alerts {
  const inFlight = new Set<Promise<void>>();
  return {
    raise(event, fields) {
      options.log.error("operator_alert", { alert: event, ...fields });
      const webhook = options.webhook;
      if (webhook === undefined) return;
      const post = fetch(webhook, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          source: "platform-auth",
          alert: event,
          at: new Date().toISOString(),
          ...fields,
        }),
        signal: AbortSignal.timeout(options.timeoutMs),
      }).then(async (response) => {
        await response.body?.cancel();
        if (!response.ok) {
          options.log.warn("alert_webhook_failed", { status: response.status });
        }
      }, (error) => {
        options.log.warn("alert_webhook_failed", { error: messageOf(error) });
      });
      inFlight.add(post);
      post.finally(() => inFlight.delete(post));
    },
    async settle() {
      await Promise.all(inFlight);
    },
  };
}
