// Operator alerts of platform auth through the daemon's one mechanism
// (platform/alerts.ts: an `alert` log line and the optional webhook POST),
// remembering posts on their way so shutdown can wait for them.

import { raiseAlert } from "../../platform/alerts.ts";
import type { Logger } from "../../platform/log.ts";

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
      const post = raiseAlert(options, {
        event,
        source: "platform-auth",
        alert: event,
        at: new Date().toISOString(),
        ...fields,
      }, "problem");
      inFlight.add(post);
      post.finally(() => inFlight.delete(post));
    },
    async settle() {
      await Promise.all(inFlight);
    },
  };
}
