// Operator alerts of platform auth through the daemon's one mechanism
// (platform/alerts.ts: an `alert` log line and the optional webhook POST),
// one open alert per platform (a failing retry does not alert again), and
// posts on their way remembered so shutdown can wait for them.

import { raiseAlert } from "../../platform/alerts.ts";
import type { Logger } from "../../platform/log.ts";

type Fields = Record<string, string | number>;

export interface Alerts {
  /** Raises `event` for `platform` unless that same alert is already open. */
  raise(platform: string, event: string, fields: Fields): void;
  /**
   * The platform works again: closes its open alert with an
   * `auth_recovered` alert. `wasFailing` (its stored status said so) closes
   * one raised before a restart too.
   */
  clear(platform: string, wasFailing: boolean): void;
  /** The alert open for the platform, if any (for /health). */
  open(platform: string): string | undefined;
  /** Waits for webhook posts still on their way. */
  settle(): Promise<void>;
}

export function createAlerts(options: {
  log: Logger;
  webhook?: string;
  timeoutMs: number;
  now: () => number;
}): Alerts {
  const inFlight = new Set<Promise<void>>();
  const opened = new Map<string, string>();
  const post = (
    event: string,
    fields: Fields,
    severity: "problem" | "recovery",
  ) => {
    const sent = raiseAlert(options, {
      event,
      source: "platform-auth",
      alert: event,
      at: new Date(options.now()).toISOString(),
      ...fields,
    }, severity);
    inFlight.add(sent);
    sent.finally(() => inFlight.delete(sent));
  };
  return {
    raise(platform, event, fields) {
      if (opened.get(platform) === event) return;
      opened.set(platform, event);
      post(event, { platform, ...fields }, "problem");
    },
    clear(platform, wasFailing) {
      const previous = opened.get(platform);
      opened.delete(platform);
      if (previous === undefined && !wasFailing) return;
      post("auth_recovered", {
        platform,
        ...(previous === undefined ? {} : { cleared: previous }),
      }, "recovery");
    },
    open: (platform) => opened.get(platform),
    async settle() {
      await Promise.all(inFlight);
    },
  };
}
