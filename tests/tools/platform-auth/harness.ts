// One platform-auth server in this process: the spec on a given clock and
// store, an in-process MCP client, /oauth/callback served on loopback by
// routes/callbacks.ts, and every raw log line kept for the secrets check.

import assert from "node:assert/strict";
import { Hono } from "hono";
import { Client } from "../../../platform/mcp_sdk.ts";
import { createLogger } from "../../../platform/log.ts";
import type { Store } from "../../../platform/store/mod.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { encodeBase64 } from "../../../platform/base64.ts";
import { HostedServer } from "../../../tools/kit/host.ts";
import { connectInProcess } from "../../../tools/kit/transport/sdk_server.ts";
import { createPlatformAuthServer } from "../../../tools/platform-auth/mod.ts";
import type { Clock } from "../../../tools/platform-auth/clock.ts";
import { callbackRoute } from "../../../routes/callbacks.ts";

const OAUTH_CALLBACK_PATH = "/oauth/callback";

export interface CallResult {
  isError: boolean;
  text: string;
  data: Record<string, unknown>;
}

export interface AuthHarness {
  host: HostedServer;
  store: Store;
  /** `http://127.0.0.1:<port>/oauth/callback` */
  callbackUrl: string;
  key: string;
  /** Raw JSON log lines. */
  lines: string[];
  call(tool: string, args?: Record<string, unknown>): Promise<CallResult>;
  ok(
    tool: string,
    args?: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  fails(
    tool: string,
    args: Record<string, unknown>,
    pattern: RegExp,
  ): Promise<string>;
  close(): Promise<void>;
}

/** A fresh 32-byte key as AGENTD_SECRET_KEY takes it. */
export function newKey(): string {
  return encodeBase64(crypto.getRandomValues(new Uint8Array(32)));
}

/** The callback listener first: providers must know the redirect URI before the server starts. */
export function callbackListener(): {
  url: string;
  attach(host: HostedServer): void;
  close(): Promise<void>;
} {
  // Read at request time: the host starts after the listener.
  const hosts: HostedServer[] = [];
  const app = new Hono();
  app.route(OAUTH_CALLBACK_PATH, callbackRoute(hosts, OAUTH_CALLBACK_PATH));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => app.fetch(request),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}${OAUTH_CALLBACK_PATH}`,
    attach(host) {
      hosts.splice(0, hosts.length, host);
    },
    close: () => server.shutdown(),
  };
}

export async function startAuth(options: {
  clock: Clock;
  callback: ReturnType<typeof callbackListener>;
  config?: Record<string, unknown>;
  store?: Store;
  key?: string;
  /** Run as on stdio: no HTTP address of our own. */
  noAddress?: boolean;
}): Promise<AuthHarness> {
  const lines: string[] = [];
  const log = createLogger({
    level: "debug",
    sink: (line) => lines.push(line),
  });
  const store = options.store ?? new MemoryStore();
  const key = options.key ?? newKey();
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-auth-" });
  const base = new URL(options.callback.url).origin;
  const host = await HostedServer.start(
    createPlatformAuthServer({ clock: options.clock }),
    {
      store,
      log,
      config: { retry_backoff_ms: 0, ...options.config },
      dataDir,
      env: { AGENTD_SECRET_KEY: key },
      address: () => options.noAddress ? undefined : base,
    },
  );
  options.callback.attach(host);
  const client = new Client({ name: "platform-auth-test", version: "1.0.0" });
  if (host.phase.phase === "running") {
    await client.connect(await connectInProcess(host));
  }
  const call = async (tool: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name: tool, arguments: args });
    const content = Array.isArray(result.content) ? result.content : [];
    const text = content.map((block) => block.type === "text" ? block.text : "")
      .join("\n");
    const data = typeof result.structuredContent === "object" &&
        result.structuredContent !== null
      ? { ...result.structuredContent }
      : {};
    return { isError: result.isError === true, text, data };
  };
  return {
    host,
    store,
    callbackUrl: options.callback.url,
    key,
    lines,
    call,
    async ok(tool, args = {}) {
      const result = await call(tool, args);
      assert.ok(!result.isError, `${tool} failed: ${result.text}`);
      return result.data;
    },
    async fails(tool, args, pattern) {
      const result = await call(tool, args);
      assert.ok(result.isError, `${tool} should fail: ${result.text}`);
      assert.match(result.text, pattern);
      return result.text;
    },
    async close() {
      await client.close();
      await host.stop(5_000);
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

/** Every key and value under the server's store, for "nothing stored" checks. */
export async function snapshot(store: Store): Promise<string> {
  const page = await store.list([], { limit: 1000 });
  return JSON.stringify(page.entries.map((entry) => [entry.key, entry.value]));
}

/** Fails naming the first secret found in any log line. */
export function assertLogsFree(
  lines: readonly string[],
  secrets: Iterable<string>,
): void {
  const values = [...new Set(secrets)].filter((value) => value.length >= 6);
  assert.ok(lines.length > 0, "there are log lines to check");
  for (const line of lines) {
    for (const value of values) {
      assert.ok(
        !line.includes(value),
        `a secret (${value.slice(0, 4)}…) is in the log: ${line.slice(0, 200)}`,
      );
    }
  }
}

/** Runs the browserless code flow: the mock authorizes at once; the tool gets code and state. */
export async function connect(
  auth: AuthHarness,
  platform: string,
): Promise<string> {
  const started = await auth.ok("authenticate", { platform });
  const response = await fetch(String(started.authorization_url), {
    redirect: "manual",
  });
  await response.body?.cancel();
  const location = new URL(response.headers.get("location") ?? "");
  assert.ok(location.href.startsWith(auth.callbackUrl), location.href);
  const code = location.searchParams.get("code") ?? "";
  await auth.ok("oauth_callback", {
    code,
    state: location.searchParams.get("state") ?? "",
  });
  return code;
}

/** A local server receiving the alert webhook's POSTs. */
export function webhookSink() {
  const received: Record<string, unknown>[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      received.push(await request.json());
      return new Response(null, { status: 204 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/alerts`,
    received,
    close: () => server.shutdown(),
  };
}
