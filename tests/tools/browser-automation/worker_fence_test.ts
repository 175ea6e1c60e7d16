// The browser-wide worker fence (own_origin_fence.ts `fenceWorkers`) on a
// real Chromium: service and shared workers of web pages never reach the
// daemon's origin, from their first line and whatever the order in which the
// browser's clients see a worker start, nor do those that ran before the
// fence; a tab the fence does not drive (the user's own, in an attached
// browser) still does.

import assert from "node:assert/strict";
import { fenceWorkers } from "../../../tools/browser-automation/own_origin_fence.ts";
import type { Browser } from "puppeteer-core";
import { browserTestIgnore, launchChromium } from "../../browser.ts";
import { waitFor } from "../../helpers.ts";

/** Shared workers per page: each starts fresh and races its fence. */
const SHARED = 5;
/** Sites, each its own origin: a new service worker on each. */
const SITES = 6;

/**
 * A local site: its page (`/`) and its workers' scripts (`/shared.js`,
 * `/service.js`) are written with `reach(kind)`, a script that fetches
 * `daemonUrl` and reports what it got to the site ("opaque": an answer it may
 * not read, so it reached the daemon; "blocked").
 */
function startSite(
  daemonUrl: string,
  page: (reach: (kind: string) => string) => string,
  worker: (kind: string, reach: (kind: string) => string) => string,
) {
  const reports: string[] = [];
  const reach = (kind: string) =>
    `fetch(${
      JSON.stringify(daemonUrl)
    }, { mode: "no-cors", cache: "no-store" }).then(
  (r) => fetch("/collect", { method: "POST", body: "${kind} " + r.type }),
  () => fetch("/collect", { method: "POST", body: "${kind} blocked" }));`;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/collect") {
        reports.push(await request.text());
        return new Response("");
      }
      if (path === "/") {
        return new Response(`<!doctype html><script>${page(reach)}</script>`, {
          headers: { "content-type": "text/html" },
        });
      }
      const kind = path === "/shared.js" ? "shared" : "service";
      return new Response(worker(kind, reach), {
        headers: { "content-type": "text/javascript" },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    reports,
    close: () => server.shutdown(),
  };
}

/** Workers that reach the daemon on their first line, and the page too. */
const startingSite = (daemonUrl: string) =>
  startSite(
    daemonUrl,
    (reach) =>
      `for (let n = 0; n < ${SHARED}; n++) new SharedWorker("/shared.js?" + n);
navigator.serviceWorker.register("/service.js");
${reach("page")}`,
    (kind, reach) => reach(kind),
  );

/** Workers that reach the daemon when `poke()` in the page asks, and the page too. */
const pokedSite = (daemonUrl: string) =>
  startSite(
    daemonUrl,
    (reach) =>
      `const shared = new SharedWorker("/shared.js");
shared.port.start();
navigator.serviceWorker.register("/service.js");
globalThis.poke = async () => {
  shared.port.postMessage("go");
  (await navigator.serviceWorker.ready).active.postMessage("go");
  ${reach("page")}
};`,
    (kind, reach) =>
      kind === "shared"
        ? `onconnect = (event) => { event.ports[0].onmessage = () => { ${
          reach(kind)
        } }; };`
        : `addEventListener("message", () => { ${reach(kind)} });`,
  );

/** Runs `fn` with a stand-in daemon (its port) and a launched Chromium, then closes both. */
async function withDaemonAndBrowser(
  fn: (daemonPort: number, browser: Browser) => Promise<void>,
): Promise<void> {
  const daemon = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("the daemon"),
  );
  try {
    const browser = await launchChromium();
    try {
      await fn(daemon.addr.port, browser);
    } finally {
      await browser.close();
    }
  } finally {
    await daemon.shutdown();
  }
}

Deno.test({
  name:
    "browser-automation: service and shared workers never reach the daemon; the user's own tabs do",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withDaemonAndBrowser(async (daemonPort, browser) => {
      const fenced: string[] = [];
      await fenceWorkers(
        browser,
        () => ({ ports: [daemonPort], hosts: [] }),
        (worker) => fenced.push(worker.type),
      );
      const seen: string[] = [];
      for (let site = 0; site < SITES; site++) {
        const other = startingSite(
          `http://127.0.0.1:${daemonPort}/health`,
        );
        const page = await browser.newPage();
        try {
          await page.goto(other.url);
          await waitFor(
            () => other.reports.length,
            (count) => count >= SHARED + 2,
            30_000,
          );
          seen.push(...other.reports);
        } finally {
          await page.close();
          await other.close();
        }
      }
      const tally: Record<string, number> = {};
      for (const report of seen) tally[report] = (tally[report] ?? 0) + 1;
      assert.deepEqual(tally, {
        "page opaque": SITES,
        "service blocked": SITES,
        "shared blocked": SITES * SHARED,
      });
      // Each worker is told of once, however often it tried.
      assert.equal(fenced.length, SITES * (SHARED + 1));
    }),
});

Deno.test({
  name:
    "browser-automation: workers that ran before the worker fence are stopped; a service worker starts again fenced",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withDaemonAndBrowser(async (daemonPort, browser) => {
      const site = pokedSite(`http://127.0.0.1:${daemonPort}/x`);
      try {
        const page = await browser.newPage();
        await page.goto(site.url);
        // Both run, unfenced (as in a browser agentd attaches to later).
        await page.evaluate(`navigator.serviceWorker.ready.then(() => true)`);
        const root = await browser.target().createCDPSession();
        const workers = async () =>
          (await root.send("Target.getTargets")).targetInfos
            .map((info) => info.type)
            .filter((type) => type.endsWith("_worker"))
            .sort();
        await waitFor(workers, (types) => types.length === 2);

        const told: string[] = [];
        await fenceWorkers(
          browser,
          () => ({ ports: [daemonPort], hosts: [] }),
          (worker) => told.push(`${worker.type} ${worker.stopped}`),
        );
        assert.deepEqual(told.sort(), [
          "service_worker true",
          "shared_worker true",
        ]);
        await waitFor(workers, (types) => types.length === 0);
        // The page's shared worker is gone; its service worker starts again at
        // the message, and its request is stopped; the page's own passes.
        await page.evaluate(`poke()`);
        await waitFor(() => site.reports.length, (count) => count >= 2, 30_000);
        assert.deepEqual(site.reports.toSorted(), [
          "page opaque",
          "service blocked",
        ]);
        assert.ok(told.includes("service_worker false"), told.join());
      } finally {
        await site.close();
      }
    }),
});
