// platform-auth behind the daemon's real app, the person's browser and a
// probe that takes one API key: what the URL-elicitation tests share
// (tests/tools/platform-auth/elicitation_test.ts,
// tests/security/elicitation_test.ts).

import assert from "node:assert/strict";
import {
  Client,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitRequestURLParams,
} from "../../../platform/mcp_sdk.ts";
import { createLogger } from "../../../platform/log.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { PolicyConfig } from "../../../platform/policy.ts";
import type { Caller } from "../../../platform/identity.ts";
import { createApp } from "../../../routes/mod.ts";
import { HostedServer } from "../../../tools/kit/host.ts";
import { Guard } from "../../../tools/kit/policy/guard.ts";
import { connectInProcess } from "../../../tools/kit/transport/sdk_server.ts";
import { ManualClock } from "../../../tools/platform-auth/clock.ts";
import { createPlatformAuthServer } from "../../../tools/platform-auth/mod.ts";
import { newKey } from "./harness.ts";

const TOKEN = "daemon-token-elicitation-0123456789";

/** A probe that takes one key: 200 with it, 401 otherwise. */
export function keyProbe(key: string) {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) =>
      new Response(null, {
        status: request.headers.get("x-api-key") === key ? 200 : 401,
      }),
  );
  return {
    config: {
      api_key_probe: {
        url: `http://127.0.0.1:${server.addr.port}/me`,
        header: "x-api-key",
        prefix: "",
      },
    },
    close: () => server.shutdown(),
  };
}

export interface Daemon {
  origin: string;
  host: HostedServer;
  guard: Guard;
  store: MemoryStore;
  lines: string[];
  /** An SDK client declaring URL elicitation, form elicitation only, or none; the operator's unless `caller` names an agent. */
  client(elicits: "url" | "form" | "none", caller?: Caller): Promise<Person>;
  close(): Promise<void>;
}

/** A client and the person behind it: what was elicited, what completed. */
export interface Person {
  client: Client;
  asked: ElicitRequestURLParams[];
  completed: string[];
  /** Resolves with the next URL elicitation (answered by `answer`). */
  nextAsk(): Promise<ElicitRequestURLParams>;
  answer: "accept" | "decline";
  call(
    tool: string,
    args: Record<string, unknown>,
  ): Promise<{ isError: boolean; text: string; data: Record<string, unknown> }>;
}

/** platform-auth behind the daemon's real app (Host/Origin guards, a daemon token), with a policy guard's audit. */
/** `policy`: the daemon's policy section (default: none, the safe defaults). */
export async function startDaemon(
  { policy = {} }: { policy?: Record<string, unknown> } = {},
): Promise<Daemon> {
  const lines: string[] = [];
  const log = createLogger({
    level: "debug",
    sink: (line) => lines.push(line),
  });
  const store = new MemoryStore();
  const guard = new Guard(new MemoryStore(), log, PolicyConfig.parse(policy));
  const hosts: HostedServer[] = [];
  // The listener first (the server needs its address), the app once the server runs.
  const face: { app?: ReturnType<typeof createApp> } = {};
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) =>
      face.app?.fetch(request) ?? new Response("starting", { status: 503 }),
  );
  const origin = `http://127.0.0.1:${server.addr.port}`;
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-elicit-" });
  const host = await HostedServer.start(
    createPlatformAuthServer({ clock: new ManualClock() }),
    {
      store,
      log,
      config: {},
      dataDir,
      env: { AGENTD_SECRET_KEY: newKey() },
      address: () => origin,
      guard,
    },
  );
  assert.equal(host.phase.phase, "running", host.phase.state.error);
  hosts.push(host);
  face.app = createApp({
    hosts,
    endpoints: new Map(),
    layout: "single",
    bindHost: "127.0.0.1",
    allowedHosts: [],
    allowedOrigins: [],
    maxBodyBytes: 1024 * 1024,
    token: TOKEN,
    version: "0.0.0",
    startedAt: Date.now(),
    log,
  });
  const clients: Client[] = [];
  /** Elicitations no client should have been sent. */
  const unexpected: string[] = [];
  return {
    origin,
    host,
    guard,
    store,
    lines,
    async client(elicits, caller = {}) {
      const client = new Client({ name: "person", version: "1.0.0" }, {
        capabilities: elicits === "url"
          ? { elicitation: { url: {} } }
          : elicits === "form"
          ? { elicitation: {} }
          : {},
      });
      const person: Person = {
        client,
        asked: [],
        completed: [],
        answer: "accept",
        nextAsk: () => waiting.promise,
        call(tool, args) {
          const answered = callTool(tool, args);
          // A test that fails while calls wait reports its assertion, not their closed connection.
          answered.catch(() => {});
          return answered;
        },
      };
      const callTool = async (
        tool: string,
        args: Record<string, unknown>,
      ) => {
        const result = await client.callTool({ name: tool, arguments: args });
        const content = Array.isArray(result.content) ? result.content : [];
        return {
          isError: result.isError === true,
          text: content.map((block) => block.type === "text" ? block.text : "")
            .join("\n"),
          data: { ...(result.structuredContent ?? {}) },
        };
      };
      let waiting = Promise.withResolvers<ElicitRequestURLParams>();
      if (elicits !== "none") {
        client.setRequestHandler(ElicitRequestSchema, (request) => {
          const params = request.params;
          // A secret is never asked in a form; a form-only client is never sent a URL.
          if (params.mode !== "url" || elicits !== "url") {
            unexpected.push(JSON.stringify(params));
            return { action: "decline" };
          }
          person.asked.push(params);
          waiting.resolve(params);
          waiting = Promise.withResolvers();
          return { action: person.answer };
        });
      }
      // Any client hears notifications: one without URL elicitation must get none.
      client.setNotificationHandler(
        ElicitationCompleteNotificationSchema,
        (notification) => {
          person.completed.push(notification.params.elicitationId);
        },
      );
      await client.connect(await connectInProcess(host, caller));
      clients.push(client);
      return person;
    },
    async close() {
      for (const client of clients) await client.close();
      assert.deepEqual(unexpected, [], "only URL elicitations, to URL clients");
      await host.stop(5_000);
      await server.shutdown();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

/** A browser: its cookies, and the page's form token once it read one. */
export class Browser {
  readonly cookies = new Map<string, string>();

  async open(
    url: string,
  ): Promise<{ status: number; html: string; token: string }> {
    const response = await fetch(url, { headers: this.#headers() });
    this.#keep(response);
    const html = await response.text();
    const token = /name="token" value="([0-9a-f]+)"/.exec(html)?.[1] ?? "";
    return { status: response.status, html, token };
  }

  async post(
    url: string,
    fields: Record<string, string>,
    options: { origin?: string | null; type?: string } = {},
  ): Promise<{ status: number; html: string }> {
    const origin = options.origin === undefined
      ? new URL(url).origin
      : options.origin;
    const headers = this.#headers();
    headers.set(
      "content-type",
      options.type ?? "application/x-www-form-urlencoded",
    );
    if (origin !== null) headers.set("origin", origin);
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: new URLSearchParams(fields).toString(),
    });
    this.#keep(response);
    return { status: response.status, html: await response.text() };
  }

  #headers(): Headers {
    const headers = new Headers();
    if (this.cookies.size > 0) {
      headers.set(
        "cookie",
        [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "),
      );
    }
    return headers;
  }

  #keep(response: Response): void {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const at = pair.indexOf("=");
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  }
}
