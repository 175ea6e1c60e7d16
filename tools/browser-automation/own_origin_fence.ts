// A fence around agentd's own origin in every tab this server drives: the
// browser fails each request that reaches the daemon (platform/daemon_origin.ts)
// before it leaves, whatever starts it (a redirect, a script, a link the page
// follows while a click waits). The checks `act` makes before and after a
// step cannot see what happens during one; this sees every request.

import {
  daemonFetchPatterns,
  type DaemonOrigin,
  reachesDaemon,
} from "../../platform/daemon_origin.ts";
import type { Page, Protocol } from "../../platform/puppeteer.ts";

/** A request the fence stopped. */
export interface Fenced {
  url: string;
  /** A document (a frame's navigation), not a resource of one. */
  document: boolean;
}

/**
 * Pauses the tab's requests that may reach the daemon (CDP `Fetch`, on a
 * session of its own: puppeteer's interception would pause every request)
 * and fails those that do; `fenced` hears each. No-op without an HTTP face.
 */
export async function fenceOwnOrigin(
  page: Page,
  origin: () => DaemonOrigin,
  fenced: (request: Fenced) => void,
): Promise<void> {
  const patterns = daemonFetchPatterns(origin());
  if (patterns.length === 0) return;
  const cdp = await page.createCDPSession();
  cdp.on(
    "Fetch.requestPaused",
    (event: Protocol.Fetch.RequestPausedEvent) => {
      const { requestId, request } = event;
      const blocked = reachesDaemon(request.url, origin());
      const reply = blocked
        ? cdp.send("Fetch.failRequest", {
          requestId,
          errorReason: "BlockedByClient",
        })
        : cdp.send("Fetch.continueRequest", { requestId });
      // The tab may close before the reply: nothing is left to unblock.
      reply.catch(() => {});
      if (blocked) {
        fenced({
          url: request.url,
          document: event.resourceType === "Document",
        });
      }
    },
  );
  await cdp.send("Fetch.enable", {
    patterns: patterns.map((urlPattern) => ({
      urlPattern,
      requestStage: "Request" as const,
    })),
  });
}
