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

/** A service or shared worker the fence stopped a request of, or stopped. */
export interface FencedWorker {
  /** The worker's own origin (the site that started it). */
  workerOrigin: string;
  /** "service_worker" or "shared_worker" (or a worklet's type). */
  type: string;
  /** Stopped as the fence went up (it ran before it), not a request of it. */
  stopped: boolean;
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

/**
 * Contexts that run apart from any tab, so a tab's fence never sees their
 * requests (a dedicated worker's requests are its tab's).
 */
const APART_FROM_TABS = new Set([
  "service_worker",
  "shared_worker",
  "worklet",
  "shared_storage_worklet",
  "auction_worklet",
]);
/** Requesters remembered (a target's kind and URL do not change). */
const REQUESTERS_KEPT = 512;

interface Requester {
  type: string;
  url: string;
}

/**
 * Fences every service and shared worker of web pages in the browser from
 * its first line: a browser-wide CDP `Fetch` pauses each request that may
 * reach the daemon, and fails it when a worker (or worklet) of a web page
 * made it. Each tab's own fence sees its requests first; the user's own tabs
 * in an attached browser, agentd's own pages and extensions pass. Nothing is
 * held or kept attached, so there is no moment between a worker's start and
 * its fence, and the browser still stops idle workers. Such workers running
 * before the fence are stopped. `fenced` hears of each worker the first time
 * a request of it is stopped, and of each worker stopped. No-op without an
 * HTTP face.
 */
export async function fenceWorkers(
  browser: Browser,
  origin: () => DaemonOrigin,
  fenced: (request: FencedWorker) => void,
): Promise<void> {
  const patterns = daemonFetchPatterns(origin());
  if (patterns.length === 0) return;
  const root = await browser.target().createCDPSession();
  const requesters = new Map<string, Requester>();
  // A request's frameId is the target that made it: a worker's own id, or a
  // tab's frame (not a target: null). Only targets are remembered, so a
  // failed lookup is not kept for a worker.
  const requester = async (id: string): Promise<Requester | null> => {
    const known = requesters.get(id);
    if (known !== undefined) return known;
    const found = await root.send("Target.getTargetInfo", { targetId: id })
      .then(({ targetInfo }) => ({
        type: targetInfo.type,
        url: targetInfo.url,
      }))
      .catch(() => null);
    if (found === null) return null;
    if (requesters.size >= REQUESTERS_KEPT) requesters.clear();
    requesters.set(id, found);
    return found;
  };
  const told = new Set<string>(); // once per worker: one may try again and again
  // An extension's workers and agentd's own pages' are not a page's.
  const pagesWorker = (found: Requester | null): found is Requester => {
    if (found === null || !APART_FROM_TABS.has(found.type)) return false;
    const url = URL.parse(found.url);
    return url !== null &&
      (url.protocol === "http:" || url.protocol === "https:") &&
      !reachesDaemon(found.url, origin());
  };
  const apart = async (
    event: Protocol.Fetch.RequestPausedEvent,
  ): Promise<Requester | undefined> => {
    if (!event.frameId || !reachesDaemon(event.request.url, origin())) return;
    const found = await requester(event.frameId);
    return pagesWorker(found) ? found : undefined;
  };
  root.on(
    "Fetch.requestPaused",
    (event: Protocol.Fetch.RequestPausedEvent) => {
      const { requestId } = event;
      void apart(event).catch(() => undefined).then((worker) => {
        if (worker !== undefined && !told.has(event.frameId)) {
          if (told.size >= REQUESTERS_KEPT) told.clear();
          told.add(event.frameId);
          fenced(fencedWorker(worker, false));
        }
        return answer(root, requestId, worker !== undefined);
      }).catch(() => {});
    },
  );
  await pauseRequests(root, patterns);
  // A worker that was running already (an attached browser, a reconnect)
  // keeps loaders bound before the fence, which it does not see (nor a
  // `Fetch` of the worker's own, for a shared worker). Each is stopped: a
  // service worker starts again, fenced, at its next event; a shared worker
  // is gone until a page of its site makes it again.
  const { targetInfos } = await root.send("Target.getTargets");
  const running = targetInfos.filter((info) =>
    pagesWorker({ type: info.type, url: info.url })
  );
  await Promise.all(running.map(async (info) => {
    const closed = await root.send("Target.closeTarget", {
      targetId: info.targetId,
    }).then(() => true, () => false);
    // One that ended meanwhile needs nothing; one still there fails the connect.
    if (!closed) {
      const left = await root.send("Target.getTargetInfo", {
        targetId: info.targetId,
      }).then(() => true, () => false);
      if (left) {
        throw new Error(
          `cannot stop the ${info.type} of ${
            URL.parse(info.url)?.origin
          }, which runs outside the fence on agentd's origin`,
        );
      }
      return;
    }
    fenced(fencedWorker(info, true));
  }));
}

function fencedWorker(worker: Requester, stopped: boolean): FencedWorker {
  return {
    workerOrigin: URL.parse(worker.url)?.origin ?? "",
    type: worker.type,
    stopped,
  };
}

/** Fails a paused request or lets it go on; a target gone before the answer needs neither. */
function answer(
  cdp: CDPSession,
  requestId: string,
  blocked: boolean,
): Promise<unknown> {
  const reply = blocked
    ? cdp.send("Fetch.failRequest", {
      requestId,
      errorReason: "BlockedByClient",
    })
    : cdp.send("Fetch.continueRequest", { requestId });
  return reply.catch(() => {});
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
      void answer(cdp, requestId, blocked);
      if (blocked) {
        fenced({
          url: request.url,
          document: event.resourceType === "Document",
        });
      }
    },
  );
  await pauseRequests(cdp, patterns);
}

/** Pauses the session's requests to URLs matching `patterns` before they leave. */
async function pauseRequests(
  cdp: CDPSession,
  patterns: string[],
): Promise<void> {
  await cdp.send("Fetch.enable", {
    patterns: patterns.map((urlPattern) => ({
      urlPattern,
      requestStage: "Request" as const,
    })),
  });
}
