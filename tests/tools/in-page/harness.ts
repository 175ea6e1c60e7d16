// The in-page stack for real: the extension built from extension/, a daemon
// (agentd serve) in a temp data dir, the native host registered in a temp
// Chromium profile by `agentd native-host install --dir`, Debian Chromium
// (headless=new) loading the extension, and a local test site.

import assert from "node:assert/strict";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { HEADLESS_CHROMIUM_ARGS } from "../../../platform/browser_discovery.ts";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { buildExtension } from "../../../extension/build.ts";
import { CHROMIUM } from "../../browser.ts";
import { type Daemon, runCli, spawnServe, waitFor } from "../../helpers.ts";

export const EXTENSION_ID = "eeoojfhbanoblidiglnjkghihkpghbig";

export interface ToolCallResult {
  isError: boolean;
  text: string;
  structured: Record<string, unknown>;
}

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolCallResult> {
  const result = await client.callTool({ name, arguments: args });
  const content = Array.isArray(result.content) ? result.content : [];
  const text = content.map((block) =>
    typeof block === "object" && block !== null && "text" in block
      ? String(block.text)
      : ""
  ).join("\n");
  const structured = typeof result.structuredContent === "object" &&
      result.structuredContent !== null
    ? { ...result.structuredContent }
    : {};
  return { isError: result.isError === true, text, structured };
}

// What the extension answers, for tests that script it over the relay: the
// tools' output schemas hold a scripted answer to the real extension's shape.

/** The extension's dom.text answer (get_text_content). */
export function domTextAnswer(text: string, selector = "p") {
  return {
    url: "https://example.test/",
    selector,
    matches: 1,
    text,
    length: text.length,
    truncated: false,
  };
}

/** The extension's dom.get answer (get_dom). */
export function domAnswer(html: string) {
  return {
    url: "https://example.test/",
    selector: null,
    include_styles: false,
    elements: 1,
    html,
    truncated: false,
  };
}

/** The extension's script.run answer (execute_js). */
export function scriptAnswer(value: number | string | null) {
  return { tab_id: 1, url: "https://example.test/", value };
}

/** Calls and asserts success; returns structuredContent. */
export async function ok(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const result = await callTool(client, name, args);
  assert.equal(result.isError, false, `${name} failed: ${result.text}`);
  return result.structured;
}

export async function mcpClient(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: "in-page-test", version: "1" });
  const headers = token === undefined ? undefined : {
    authorization: `Bearer ${token}`,
  };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers },
    }),
  );
  return client;
}

export interface Site {
  url: string;
  close(): Promise<void>;
}

const PAGE = `<!doctype html>
<html><head><title>In-page test</title></head>
<body>
  <h1 id="title" style="color: rgb(255, 0, 0)">Hello in-page</h1>
  <p id="para">Some <b>bold</b>   text.</p>
  <form id="form"><label for="name">Name</label><input id="name" name="name" value="">
    <select id="color"><option value="r">Red</option><option value="g">Green</option></select></form>
  <button id="go" type="button">Save changes</button>
  <div id="slot"></div>
  <script>
    localStorage.setItem("theme", "dark");
    sessionStorage.setItem("visit", "first");
    window.pageAnswer = 41;
    console.warn("page says hi");
    setTimeout(() => {
      const late = document.createElement("span");
      late.id = "late"; late.textContent = "I came late";
      document.getElementById("slot").append(late);
    }, 700);
  </script>
</body></html>`;

const SECOND = `<!doctype html><html><head><title>Second page</title></head>
<body><p id="second">The second page</p></body></html>`;

export function startSite(): Site {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => {
      const url = new URL(request.url);
      if (url.pathname === "/") {
        return new Response(PAGE, {
          headers: {
            "content-type": "text/html",
            "set-cookie": "session=abc123; Path=/; HttpOnly",
          },
        });
      }
      if (url.pathname === "/second") {
        return new Response(SECOND, {
          headers: { "content-type": "text/html" },
        });
      }
      if (url.pathname.startsWith("/api/")) {
        return Response.json({ path: url.pathname, query: url.search });
      }
      return new Response("not found", { status: 404 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

export interface Stack {
  dataDir: string;
  /** The unpacked extension the browser loaded (built into the data dir). */
  extension: string;
  profile: string;
  daemon: Daemon;
  browser: Browser;
  page: Page;
  site: Site;
  /** /mcp/in-page of the daemon. */
  client: Client;
  /** The gateway at /mcp. */
  gateway: Client;
  health(): Promise<Record<string, unknown>>;
  /** Stops the daemon and starts another on the same data dir; clients are reconnected. */
  restartDaemon(): Promise<void>;
  /** Stops the daemon for good (close() then skips it). */
  stopDaemon(): Promise<void>;
  close(): Promise<void>;
}

export async function inPageHealth(
  daemon: Daemon,
  token?: string,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${daemon.url}/health`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const body: unknown = await response.json();
  assert.ok(typeof body === "object" && body !== null && "servers" in body);
  const servers = body.servers;
  assert.ok(
    typeof servers === "object" && servers !== null && "in-page" in servers,
  );
  const server = servers["in-page"];
  assert.ok(
    typeof server === "object" && server !== null && "details" in server,
  );
  const details = server.details;
  assert.ok(typeof details === "object" && details !== null);
  return { ...details };
}

export async function launchWithExtension(
  profile: string,
  extension: string,
): Promise<Browser> {
  assert.ok(CHROMIUM, "Chromium is needed: apt-get install chromium");
  return await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    enableExtensions: true,
    args: [
      ...HEADLESS_CHROMIUM_ARGS,
      `--load-extension=${extension}`,
      `--disable-extensions-except=${extension}`,
      "--enable-unsafe-extension-debugging",
    ],
  });
}

/** Everything up: daemon, host registered, browser with the extension on the test page, extension connected. */
export async function startStack(
  options: {
    installArgs?: string[];
    /** The daemon's environment (e.g. AGENTD_TOKEN). */
    env?: Record<string, string>;
    /** Bearer token of the clients. */
    token?: string;
  } = {},
): Promise<Stack> {
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-inpage-" });
  const extension = await buildExtension(join(dataDir, "extension"));
  const profile = join(dataDir, "profile");
  const site = startSite();
  let daemon = await spawnServe(dataDir, {
    extra: ["--servers", "in-page,gateway"],
    env: options.env,
  });
  const install = await runCli([
    "native-host",
    "install",
    "--data-dir",
    dataDir,
    "--dir",
    join(profile, "NativeMessagingHosts"),
    ...options.installArgs ?? [],
  ]);
  assert.equal(install.code, 0, install.stderr);
  const browser = await launchWithExtension(profile, extension);
  const [existing] = await browser.pages();
  const page = existing ?? await browser.newPage();
  await page.goto(`${site.url}/`, { waitUntil: "load" });
  let client = await mcpClient(`${daemon.url}/mcp/in-page`, options.token);
  let gateway = await mcpClient(`${daemon.url}/mcp`, options.token);
  const stack: Stack = {
    dataDir,
    extension,
    profile,
    get daemon() {
      return daemon;
    },
    browser,
    page,
    site,
    get client() {
      return client;
    },
    get gateway() {
      return gateway;
    },
    health: () => inPageHealth(daemon, options.token),
    async restartDaemon() {
      await client.close().catch(() => {});
      await gateway.close().catch(() => {});
      await daemon.stop();
      daemon = await spawnServe(dataDir, {
        extra: ["--servers", "in-page,gateway"],
        env: options.env,
      });
      client = await mcpClient(`${daemon.url}/mcp/in-page`, options.token);
      gateway = await mcpClient(`${daemon.url}/mcp`, options.token);
    },
    async stopDaemon() {
      await client.close().catch(() => {});
      await gateway.close().catch(() => {});
      await daemon.stop();
    },
    async close() {
      await client.close().catch(() => {});
      await gateway.close().catch(() => {});
      await browser.close().catch(() => {});
      await daemon.stop();
      await site.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
  return stack;
}

/** The extension's own status, read in its service worker over CDP. */
export async function workerStatus(
  browser: Browser,
): Promise<Record<string, unknown>> {
  const target = await browser.waitForTarget((candidate) =>
    candidate.type() === "service_worker" &&
    candidate.url().includes(EXTENSION_ID)
  );
  const worker = await target.worker();
  assert.ok(worker, "the extension's service worker");
  const status: unknown = await worker.evaluate("agentdStatus()");
  assert.ok(typeof status === "object" && status !== null);
  return { ...status };
}

/** Waits until /health says the extension is connected. */
export async function extensionConnected(
  stack: Stack,
  timeoutMs = 20_000,
): Promise<Record<string, unknown>> {
  return await waitFor(
    () => stack.health(),
    (health) => health.extension === "connected",
    timeoutMs,
  );
}
