// URL-mode elicitation (MCP 2025-11-25) in platform-auth: an MCP SDK client
// that declares `elicitation.url` is sent agentd's own page; the test plays
// the person's browser (GET the page, POST the form as a browser would) and
// the tool finishes once the key passed its probe, or once the provider's
// redirect came back. The secret is nowhere but the vault: not in the tool
// result, the elicitation, a log line, the audit or the store in clear.
// The page is one-time and belongs to its call and to the browser that
// opened it; a client without URL elicitation is given the page's address.

import assert from "node:assert/strict";
import {
  Client,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  type ElicitRequestURLParams,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { StdioClientTransport } from "../../../platform/mcp_sdk_stdio_client.ts";
import { directLink } from "../../../tools/kit/tool_call.ts";
import { PAGE_PATH } from "../../../tools/platform-auth/browser_pages.ts";
import { FIXTURE_CLI, freePort, spawnDaemon, tempDir } from "../../helpers.ts";
import { assertLogsFree, newKey, snapshot } from "./harness.ts";
import { Browser, keyProbe, startDaemon } from "./elicitation_harness.ts";
import { startMockServer } from "./providers.ts";

Deno.test("elicitation: add_platform asks for the API key in the daemon's page; the key reaches only the vault", async () => {
  const key = "wk-" + crypto.randomUUID();
  const wrong = "wrong-" + crypto.randomUUID();
  const probe = keyProbe(key);
  const daemon = await startDaemon();
  try {
    const person = await daemon.client("url");
    const adding = person.call("add_platform", {
      platform: "weather",
      config: probe.config,
    });
    const asked = await person.nextAsk();
    assert.equal(
      asked.url.startsWith(`${daemon.origin}${PAGE_PATH}?id=`),
      true,
      asked.url,
    );
    assert.match(asked.message, /API key of "weather".*not in the chat/);

    // The person's browser: the daemon's page, no daemon token needed.
    const browser = new Browser();
    const page = await browser.open(asked.url);
    assert.equal(page.status, 200, page.html);
    assert.match(page.html, /type="password"/);
    assert.match(page.html, /weather/);
    assert.doesNotMatch(page.html, /<script|https?:\/\/(?!127\.0\.0\.1)/);
    assert.ok(page.token.length === 64);

    // A key the platform refuses: the page says so and stays open.
    const refused = await browser.post(asked.url, {
      token: page.token,
      secret: wrong,
      action: "submit",
    });
    assert.equal(refused.status, 400);
    assert.match(refused.html, /refused this key.*401/);
    assert.ok(!refused.html.includes(wrong));

    const saved = await browser.post(asked.url, {
      token: page.token,
      secret: key,
      action: "submit",
    });
    assert.equal(saved.status, 200, saved.html);
    assert.match(saved.html, /passed its probe \(200\) and is saved/);

    const result = await adding;
    assert.equal(result.isError, false, result.text);
    assert.equal(result.data.status, "active");
    assert.equal(result.data.api_key, "set (write-only)");
    assert.deepEqual(person.completed, [asked.elicitationId]);

    // Usable: get_token hands it to whoever needs it (its job), validate runs the probe.
    const token = await person.call("get_token", { platform: "weather" });
    assert.equal(token.data.access_token, key);
    const checked = await person.call("validate_token", {
      platform: "weather",
      token: key,
    });
    assert.equal(checked.data.state, "valid");

    // One-time: the used page is gone, for a GET and for a replayed post.
    assert.equal((await browser.open(asked.url)).status, 404);
    const replay = await browser.post(asked.url, {
      token: page.token,
      secret: wrong,
      action: "submit",
    });
    assert.equal(replay.status, 404);
    assert.equal(
      (await person.call("get_token", { platform: "weather" })).data
        .access_token,
      key,
    );

    // Replaced without a key, same probe: the stored key stays, nobody is asked.
    const replaced = await person.call("add_platform", {
      platform: "weather",
      config: {
        ...probe.config,
        api_key_probe: { ...probe.config.api_key_probe, method: "GET" },
      },
    });
    assert.equal(replaced.data.replaced, true, replaced.text);
    assert.equal(replaced.data.api_key, "set (write-only)");
    assert.equal(person.asked.length, 1);
    assert.equal(
      (await person.call("get_token", { platform: "weather" })).data
        .access_token,
      key,
    );

    // Only the page's own path takes a post without the daemon token.
    const callbackPost = await fetch(`${daemon.origin}/oauth/callback`, {
      method: "POST",
    });
    assert.equal(callbackPost.status, 401);
    await callbackPost.body?.cancel();

    // Nowhere else: the tool's answer, the elicitation, the logs, the audit, the store.
    assert.ok(!result.text.includes(key));
    assert.ok(!JSON.stringify(person.asked).includes(key));
    const audit = JSON.stringify(await daemon.guard.audit.query());
    assert.match(audit, /add_platform/);
    assert.ok(!audit.includes(key) && !audit.includes(wrong));
    const stored = await snapshot(daemon.store);
    assert.ok(!stored.includes(key), "sealed in the store");
    assertLogsFree(daemon.lines, [key, wrong, page.token]);
    assert.ok(
      daemon.lines.some((line) =>
        line.includes('"outcome":"ok"') && line.includes('"source":"page"')
      ),
      "the probe's success is logged, without the key",
    );
  } finally {
    await daemon.close();
    await probe.close();
  }
});

Deno.test("elicitation: a page belongs to its call and its browser; foreign, replayed and cross-origin posts are refused", async () => {
  const key = "wk-" + crypto.randomUUID();
  const probe = keyProbe(key);
  const daemon = await startDaemon();
  try {
    const person = await daemon.client("url");
    for (const platform of ["alpha", "beta"]) {
      const added = await daemon.client("none").then((other) =>
        other.call("add_platform", { platform, config: probe.config })
      );
      assert.equal(added.data.status, "not_authenticated", added.text);
    }
    const alpha = person.call("authenticate", { platform: "alpha" });
    const askedAlpha = await person.nextAsk();
    const beta = person.call("authenticate", { platform: "beta" });
    const askedBeta = await person.nextAsk();
    assert.notEqual(askedAlpha.elicitationId, askedBeta.elicitationId);

    // A HEAD (a link checker) does not take the page.
    const head = await fetch(askedAlpha.url, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("set-cookie"), null);
    await head.body?.cancel();

    const mine = new Browser();
    const pageAlpha = await mine.open(askedAlpha.url);
    const pageBeta = await mine.open(askedBeta.url);
    assert.equal(pageAlpha.status, 200);

    // Another browser cannot take a page already opened.
    const other = new Browser();
    const taken = await other.open(askedAlpha.url);
    assert.equal(taken.status, 409);
    assert.match(taken.html, /already open in another browser/);
    const stolen = await other.post(askedAlpha.url, {
      token: pageAlpha.token,
      secret: key,
    });
    assert.equal(stolen.status, 403, "the token without the browser's cookie");

    // beta's form token on alpha's page: foreign.
    const foreign = await mine.post(askedAlpha.url, {
      token: pageBeta.token,
      secret: key,
    });
    assert.equal(foreign.status, 403);
    assert.match(foreign.html, /does not belong to this page/);

    // No Origin (or another page's): no post; another origin is stopped by the daemon's guard.
    assert.equal(
      (await mine.post(
        askedAlpha.url,
        { token: pageAlpha.token, secret: key },
        {
          origin: null,
        },
      )).status,
      403,
    );
    assert.equal(
      (await mine.post(
        askedAlpha.url,
        { token: pageAlpha.token, secret: key },
        {
          origin: "http://evil.example",
        },
      )).status,
      403,
    );
    assert.equal(
      (await mine.post(
        askedAlpha.url,
        { token: pageAlpha.token, secret: key },
        {
          type: "text/plain",
        },
      )).status,
      415,
    );
    const unknown = new URL(askedAlpha.url);
    unknown.searchParams.set("id", "0".repeat(64));
    assert.equal((await mine.open(unknown.href)).status, 404);

    // The person cancels beta on its page: that call ends, nothing saved.
    const cancelled = await mine.post(askedBeta.url, {
      token: pageBeta.token,
      action: "cancel",
    });
    assert.equal(cancelled.status, 200);
    const betaResult = await beta;
    assert.equal(betaResult.isError, true);
    assert.match(betaResult.text, /No API key was saved for "beta".*cancelled/);

    // alpha still completes, and only alpha's call hears of it.
    const saved = await mine.post(askedAlpha.url, {
      token: pageAlpha.token,
      secret: key,
      action: "submit",
    });
    assert.equal(saved.status, 200, saved.html);
    const alphaResult = await alpha;
    assert.equal(alphaResult.isError, false, alphaResult.text);
    assert.equal(alphaResult.data.status, "active");
    assert.deepEqual(person.completed, [askedAlpha.elicitationId]);
    assert.equal(
      (await person.call("get_auth_status", { platform: "beta" })).data.status,
      "not_authenticated",
    );

    // A declined elicitation: the page closes at once.
    person.answer = "decline";
    const declined = person.call("authenticate", { platform: "beta" });
    const askedAgain = await person.nextAsk();
    const result = await declined;
    assert.equal(result.isError, true);
    assert.match(
      result.text,
      /declined agentd's page; nothing was entered there/,
    );
    assert.equal((await new Browser().open(askedAgain.url)).status, 404);
    const addedDeclined = person.call("add_platform", {
      platform: "gamma",
      config: probe.config,
    });
    await person.nextAsk();
    const gamma = await addedDeclined;
    assert.equal(gamma.isError, true);
    assert.match(
      gamma.text,
      /"gamma" is added, without its API key: The person declined/,
    );
    assert.equal(
      (await person.call("get_auth_status", { platform: "gamma" })).data
        .status,
      "not_authenticated",
    );
    assertLogsFree(daemon.lines, [key, pageAlpha.token, pageBeta.token]);
  } finally {
    await daemon.close();
    await probe.close();
  }
});

Deno.test("elicitation: a client without URL elicitation is given the page's address; a refused key names it too", async () => {
  const key = "wk-" + crypto.randomUUID();
  const probe = keyProbe(key);
  const daemon = await startDaemon();
  try {
    const plain = await daemon.client("form");
    const added = await plain.call("add_platform", {
      platform: "weather",
      config: probe.config,
    });
    assert.equal(added.isError, false, added.text);
    assert.equal(added.data.status, "not_authenticated");
    const url = String(added.data.enter_secret_at);
    assert.ok(url.startsWith(`${daemon.origin}${PAGE_PATH}?id=`), url);
    assert.match(String(added.data.note), /never the chat/);

    // The person opens it whenever: the daemon saves the key by itself.
    const browser = new Browser();
    const page = await browser.open(url);
    const saved = await browser.post(url, { token: page.token, secret: key });
    assert.equal(saved.status, 200, saved.html);
    assert.equal(
      (await plain.call("get_auth_status", { platform: "weather" })).data
        .status,
      "active",
    );
    assert.equal(
      (await plain.call("get_token", { platform: "weather" })).data
        .access_token,
      key,
    );
    assert.equal(plain.completed.length, 0, "no notification it cannot take");

    // The key given in the config (the old way) and refused: the error names a page.
    await plain.call("add_platform", {
      platform: "stale",
      config: { ...probe.config, api_key: "stale-key-123456" },
    });
    const refused = await plain.call("authenticate", { platform: "stale" });
    assert.equal(refused.isError, true);
    assert.match(
      refused.text,
      new RegExp(
        `refused by its probe.*401.*enter the key at ${daemon.origin}${PAGE_PATH}\\?id=[0-9a-f]{64}`,
      ),
    );
    assertLogsFree(daemon.lines, [key, "stale-key-123456"]);
  } finally {
    await daemon.close();
    await probe.close();
  }
});

Deno.test("elicitation through an in-process link that relays it (how the gateway reaches a built-in server)", async () => {
  const key = "wk-" + crypto.randomUUID();
  const probe = keyProbe(key);
  const daemon = await startDaemon();
  try {
    const link = directLink(daemon.host, {});
    const completed: string[] = [];
    const browser = new Browser();
    let asked: ElicitRequestURLParams | undefined;
    const result = await link.callTool(
      "add_platform",
      { platform: "weather", config: probe.config },
      {
        elicit(params) {
          assert.equal(params.mode, "url");
          if (params.mode !== "url") {
            return Promise.resolve({ action: "decline" });
          }
          asked = params;
          // The person, after the client showed the page.
          (async () => {
            const page = await browser.open(params.url);
            await browser.post(params.url, { token: page.token, secret: key });
          })();
          return Promise.resolve({ action: "accept" });
        },
        async elicitationComplete(id) {
          completed.push(id);
          await Promise.resolve();
        },
      },
    );
    assert.ok(!result.isError, JSON.stringify(result.content));
    assert.equal(
      Reflect.get(result.structuredContent ?? {}, "status"),
      "active",
    );
    assert.ok(asked !== undefined);
    assert.deepEqual(completed, [asked.elicitationId]);

    // Without the relay, the link says the client cannot elicit: the address path.
    const plain = await directLink(daemon.host, {}).callTool(
      "add_platform",
      { platform: "other", config: probe.config },
      {},
    );
    assert.ok(
      String(Reflect.get(plain.structuredContent ?? {}, "enter_secret_at"))
        .startsWith(`${daemon.origin}${PAGE_PATH}?id=`),
    );
  } finally {
    await daemon.close();
    await probe.close();
  }
});

Deno.test("elicitation: OAuth consent through the daemon's one-time page; the call ends when the provider's redirect came back", async () => {
  const mock = await startMockServer();
  const daemon = await startDaemon();
  try {
    const person = await daemon.client("url");
    const added = await person.call("add_platform", {
      platform: "acme",
      config: { issuer: mock.issuer, client_id: "acme-client" },
    });
    assert.equal(added.isError, false, added.text);
    const connecting = person.call("authenticate", { platform: "acme" });
    const asked = await person.nextAsk();
    assert.ok(asked.url.startsWith(`${daemon.origin}${PAGE_PATH}?id=`));
    assert.match(asked.message, /Connect "acme".*127\.0\.0\.1/);
    assert.ok(
      !asked.url.includes("state="),
      "the provider's state stays in agentd",
    );

    // The browser: agentd's page hands it to the provider, which redirects back.
    const handOff = await fetch(asked.url, { redirect: "manual" });
    await handOff.body?.cancel();
    assert.equal(handOff.status, 303);
    const authorize = handOff.headers.get("location") ?? "";
    assert.ok(authorize.startsWith(mock.issuer), authorize);
    const consent = await fetch(authorize, { redirect: "manual" });
    await consent.body?.cancel();
    const back = consent.headers.get("location") ?? "";
    assert.ok(back.startsWith(`${daemon.origin}/oauth/callback?`), back);
    const landed = await fetch(back);
    assert.equal(landed.status, 200);
    assert.match(await landed.text(), /"acme" is connected/);

    const result = await connecting;
    assert.equal(result.isError, false, result.text);
    assert.equal(result.data.status, "active");
    assert.deepEqual(person.completed, [asked.elicitationId]);
    const token = await person.call("get_token", { platform: "acme" });
    assert.equal(typeof token.data.access_token, "string");
    assert.ok(!result.text.includes(String(token.data.access_token)));

    // The hand-off is one-time.
    const again = await fetch(asked.url, { redirect: "manual" });
    assert.equal(again.status, 404);
    await again.body?.cancel();

    // A client without URL elicitation keeps the authorization_url answer.
    const plain = await daemon.client("none");
    const started = await plain.call("authenticate", { platform: "acme" });
    assert.ok(String(started.data.authorization_url).startsWith(mock.issuer));
    assertLogsFree(daemon.lines, [String(token.data.access_token)]);
  } finally {
    await daemon.close();
    await mock.close();
  }
});

Deno.test("elicitation: a client secret left out of the config is entered in the page and tried with a grant before it is kept", async () => {
  const mock = await startMockServer();
  const daemon = await startDaemon();
  const secret = "svc-secret-" + crypto.randomUUID();
  try {
    const person = await daemon.client("url");
    const adding = person.call("add_platform", {
      platform: "jobs",
      config: {
        issuer: mock.issuer,
        grant: "client_credentials",
        client_id: "svc",
      },
    });
    const asked = await person.nextAsk();
    assert.match(asked.message, /client secret of "jobs"/);
    const browser = new Browser();
    const page = await browser.open(asked.url);
    assert.match(page.html, /client secret for jobs/);
    const saved = await browser.post(asked.url, {
      token: page.token,
      secret,
    });
    assert.equal(saved.status, 200, saved.html);
    assert.match(saved.html, /accepted by the provider and is saved/);
    const result = await adding;
    assert.equal(result.isError, false, result.text);
    assert.equal(result.data.client_secret, "set (write-only)");
    assert.equal(result.data.status, "active", "the grant ran with it");
    assert.deepEqual(person.completed, [asked.elicitationId]);
    const token = await person.call("get_token", { platform: "jobs" });
    assert.equal(typeof token.data.access_token, "string");

    // A client without URL elicitation: authenticate names the page to use.
    const plain = await daemon.client("none");
    await plain.call("add_platform", {
      platform: "jobs2",
      config: {
        issuer: mock.issuer,
        grant: "client_credentials",
        client_id: "svc2",
      },
    });
    const refused = await plain.call("authenticate", { platform: "jobs2" });
    assert.equal(refused.isError, true);
    assert.match(
      refused.text,
      /"jobs2" has no client secret yet\. Ask the person to enter it at http:\/\/127\.0\.0\.1:\d+\/platform-auth\/elicitation\?id=/,
    );
    assert.ok(!JSON.stringify(result).includes(secret));
    assert.ok(!(await snapshot(daemon.store)).includes(secret));
    assertLogsFree(daemon.lines, [secret, String(token.data.access_token)]);
  } finally {
    await daemon.close();
    await mock.close();
  }
});

Deno.test("elicitation over stdio: the page is served by the server's loopback listener; nothing secret on stderr", async () => {
  await using dir = await tempDir();
  const key = "wk-" + crypto.randomUUID();
  const probe = keyProbe(key);
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [
      "run",
      "-A",
      FIXTURE_CLI,
      "mcp",
      "platform-auth",
      "--data-dir",
      dir.path,
    ],
    env: {
      NO_COLOR: "1",
      PATH: Deno.env.get("PATH") ?? "",
      HOME: dir.path,
      AGENTD_SECRET_KEY: newKey(),
    },
    stderr: "pipe",
  });
  const stderr: string[] = [];
  const stderrEnded = Promise.withResolvers<void>();
  transport.stderr?.on("data", (chunk: unknown) => stderr.push(String(chunk)));
  transport.stderr?.on("end", () => stderrEnded.resolve());
  const client = new Client({ name: "person", version: "1.0.0" }, {
    capabilities: { elicitation: { url: {} } },
  });
  const asked = Promise.withResolvers<ElicitRequestURLParams>();
  const completed: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    if (request.params.mode === "url") asked.resolve(request.params);
    return { action: "accept" };
  });
  client.setNotificationHandler(
    ElicitationCompleteNotificationSchema,
    (notification) => {
      completed.push(notification.params.elicitationId);
    },
  );
  try {
    await client.connect(transport);
    const adding = client.callTool({
      name: "add_platform",
      arguments: { platform: "weather", config: probe.config },
    });
    const params = await asked.promise;
    const url = new URL(params.url);
    assert.equal(url.hostname, "127.0.0.1");
    assert.equal(url.pathname, PAGE_PATH);
    const browser = new Browser();
    const page = await browser.open(params.url);
    assert.equal(page.status, 200, page.html);
    const saved = await browser.post(params.url, {
      token: page.token,
      secret: key,
    });
    assert.equal(saved.status, 200, saved.html);
    const result = await adding;
    assert.ok(!result.isError, JSON.stringify(result.content));
    assert.equal(
      Reflect.get(result.structuredContent ?? {}, "status"),
      "active",
    );
    assert.deepEqual(completed, [params.elicitationId]);
    const token = await client.callTool({
      name: "get_token",
      arguments: { platform: "weather" },
    });
    assert.equal(
      Reflect.get(token.structuredContent ?? {}, "access_token"),
      key,
    );
    assert.ok(!JSON.stringify(result).includes(key));
  } finally {
    await client.close();
    await stderrEnded.promise;
    await probe.close();
  }
  const lines = stderr.join("").split("\n").filter((line) => line !== "");
  assert.ok(lines.some((line) => line.includes("platform_auth_ready")));
  assertLogsFree(lines, [key]);
});

Deno.test("elicitation over HTTP (`mcp platform-auth --port`): the page on the server's own face, the request and its completion on the call's stream", async () => {
  await using dir = await tempDir();
  const key = "wk-" + crypto.randomUUID();
  const probe = keyProbe(key);
  const daemon = await spawnDaemon(
    [
      "mcp",
      "platform-auth",
      "--port",
      String(freePort()),
      "--data-dir",
      dir.path,
    ],
    { env: { AGENTD_SECRET_KEY: newKey(), HOME: dir.path } },
  );
  const client = new Client({ name: "person", version: "1.0.0" }, {
    capabilities: { elicitation: { url: {} } },
  });
  const asked = Promise.withResolvers<ElicitRequestURLParams>();
  const completed: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    if (request.params.mode === "url") asked.resolve(request.params);
    return { action: "accept" };
  });
  client.setNotificationHandler(
    ElicitationCompleteNotificationSchema,
    (notification) => {
      completed.push(notification.params.elicitationId);
    },
  );
  const transport = new StreamableHTTPClientTransport(
    new URL(`${daemon.url}/mcp`),
  );
  try {
    await client.connect(transport);
    const adding = client.callTool({
      name: "add_platform",
      arguments: { platform: "weather", config: probe.config },
    });
    adding.catch(() => {});
    const params = await asked.promise;
    assert.ok(params.url.startsWith(`${daemon.url}${PAGE_PATH}?id=`));
    const browser = new Browser();
    const page = await browser.open(params.url);
    assert.equal(page.status, 200, page.html);
    const saved = await browser.post(params.url, {
      token: page.token,
      secret: key,
    });
    assert.equal(saved.status, 200, saved.html);
    const result = await adding;
    assert.ok(!result.isError, JSON.stringify(result.content));
    assert.equal(
      Reflect.get(result.structuredContent ?? {}, "status"),
      "active",
    );
    assert.deepEqual(completed, [params.elicitationId]);
    assert.ok(!JSON.stringify(result).includes(key));
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
    await daemon.stop();
    await probe.close();
  }
  const lines = [
    ...daemon.logs.map((line) => JSON.stringify(line)),
    ...daemon.stray,
  ];
  assert.ok(lines.some((line) => line.includes('"source":"page"')));
  assertLogsFree(lines, [key]);
});
