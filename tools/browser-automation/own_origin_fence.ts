// A fence around agentd's own origin in the browser this server drives: the
// browser fails each request that reaches the daemon (platform/daemon_origin.ts)
// before it leaves, whatever starts it (a redirect, a script, a link the page
// follows while a click waits, a worker the page started). The checks `act`
// makes before and after a step cannot see what happens during one; this
// sees every request.
//
// Two parts: each tab this server drives (its documents, frames and dedicated
// workers), and the browser's service and shared workers. Those run apart
// from any tab, so a tab's fence never sees their requests, and they outlive
// it: a page could leave one behind that reaches the daemon at any later time.

import {
  daemonFetchPatterns,
  type DaemonOrigin,
  reachesDaemon,
} from "../../platform/daemon_origin.ts";
import type {
  Browser,
  CDPSession,
  Page,
  Protocol,
} from "../../platform/puppeteer.ts";

/** A request the fence stopped. */
export interface Fenced {
  url: string;
  /** A document (a frame's navigation), not a resource of one. */
  document: boolean;
}

/** A service or shared worker's request the fence stopped. */
export interface FencedWorker {
  /** The worker's own origin (the site that started it). */
  workerOrigin: string;
  /** "service_worker" or "shared_worker". */
  type: string;
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
  await fenceSession(await page.createCDPSession(), patterns, origin, fenced);
}

/** The workers that run apart from tabs. Dedicated workers are their tab's. */
const WORKER_TYPES = ["service_worker", "shared_worker"];

/**
 * Fences every service and shared worker of web pages in the browser, the
 * ones running now and each new one before its first line runs: a
 * browser-wide auto-attach holds a new worker until its fence is up. Workers
 * of agentd's own pages and of extensions are let go untouched. A fenced
 * worker stays attached while this connection lasts (`Fetch` works only
 * through a live session), so the browser does not stop it when idle.
 * `fenced` hears of each worker the first time it is stopped. No-op without
 * an HTTP face.
 */
export async function fenceWorkers(
  browser: Browser,
  origin: () => DaemonOrigin,
  fenced: (request: FencedWorker) => void,
): Promise<void> {
  const patterns = daemonFetchPatterns(origin());
  if (patterns.length === 0) return;
  const root = await browser.target().createCDPSession();
  const connection = root.connection();
  if (connection === undefined) {
    throw new Error("the browser's CDP connection is gone");
  }
  root.on(
    "Target.attachedToTarget",
    (event: Protocol.Target.AttachedToTargetEvent) => {
      const { sessionId, targetInfo } = event;
      const worker = connection.session(sessionId);
      if (worker === null) return;
      const resume = () =>
        worker.send("Runtime.runIfWaitingForDebugger").catch(() => {});
      const url = URL.parse(targetInfo.url);
      const web = url !== null &&
        (url.protocol === "http:" || url.protocol === "https:");
      if (!web || reachesDaemon(targetInfo.url, origin())) {
        // Nothing to fence: let it run, and let the browser stop it when idle.
        void resume().then(() =>
          root.send("Target.detachFromTarget", { sessionId }).catch(() => {})
        );
        return;
      }
      let told = false; // once per worker: one may try again and again
      const report = () => {
        if (told) return;
        told = true;
        fenced({ workerOrigin: url.origin, type: targetInfo.type });
      };
      // The worker waits for the fence, then runs; one that closed meanwhile
      // needs neither.
      void fenceSession(worker, patterns, origin, report)
        .catch(() => {})
        .finally(resume);
    },
  );
  await root.send("Target.setAutoAttach", {
    autoAttach: true,
    waitForDebuggerOnStart: true,
    flatten: true,
    filter: [
      ...WORKER_TYPES.map((type) => ({ type, exclude: false })),
      { exclude: true },
    ],
  });
}

/** Pauses the session's requests matching `patterns`, fails those that reach the daemon, continues the rest. */
async function fenceSession(
  cdp: CDPSession,
  patterns: string[],
  origin: () => DaemonOrigin,
  fenced: (request: Fenced) => void,
): Promise<void> {
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
