// The browser-wide worker fence (own_origin_fence.ts `fenceWorkers`) on a
// real Chromium: service and shared workers of web pages never reach the
// daemon's origin, from their first line and whatever the order in which the
// browser's clients see a worker start; a tab the fence does not drive (the
// user's own, in an attached browser) still does.

import assert from "node:assert/strict";
import { fenceWorkers } from "../../../tools/browser-automation/own_origin_fence.ts";
import { browserTestIgnore, launchChromium } from "../../browser.ts";
import { waitFor } from "../../helpers.ts";

/** Shared workers per page: each starts fresh and races its fence. */
const SHARED = 5;
/** Sites, each its own origin: a new service worker on each. */
const SITES = 6;

/** A site whose page starts workers that reach `daemonUrl` on their first line and report what they got. */
function startSite(daemonUrl: string) {
  const reports: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/collect") {
        reports.push(await request.text());
        return new Response("");
      }
      // "opaque": it got an answer it may not read, so it reached the daemon.
      const reach = (kind: string) =>
        `fetch(${JSON.stringify(daemonUrl)}, { mode: "no-cors" }).then(
  (r) => fetch("/collect", { method: "POST", body: "${kind} " + r.type }),
  () => fetch("/collect", { method: "POST", body: "${kind} blocked" }));`;
      if (path === "/") {
        return new Response(
          `<!doctype html><script>
for (let n = 0; n < ${SHARED}; n++) new SharedWorker("/shared.js?" + n);
navigator.serviceWorker.register("/service.js");
${reach("page")}</script>`,
          { headers: { "content-type": "text/html" } },
        );
      }
      const kind = path === "/shared.js" ? "shared" : "service";
      return new Response(reach(kind), {
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

Deno.test({
  name:
    "browser-automation: service and shared workers never reach the daemon; the user's own tabs do",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const daemon = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("the daemon"),
    );
    const browser = await launchChromium();
    try {
      const fenced: string[] = [];
      await fenceWorkers(
        browser,
        () => ({ ports: [daemon.addr.port], hosts: [] }),
        (worker) => fenced.push(worker.type),
      );
      const seen: string[] = [];
      for (let site = 0; site < SITES; site++) {
        const other = startSite(`http://127.0.0.1:${daemon.addr.port}/health`);
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
    } finally {
      await browser.close();
      await daemon.shutdown();
    }
  },
});
