// /dashboard in real headless Chromium against a real daemon with agents, a
// team run and memories: every panel shows live data and updates in place,
// the chat panel streams an answer and its tool call from the local model
// server, memory search works, no token appears in any URL or the page, and
// neither a foreign Origin nor another local page can drive it.

import assert from "node:assert/strict";
import { startModelServer } from "../agents/model_server.ts";
import { browserTestIgnore, launchChromium, saveArtifact } from "../browser.ts";
import { spawnServe, tempDir } from "../helpers.ts";

const TOKEN = "dashboard-test-token-0123456789abcdef";

Deno.test({
  name:
    "dashboard: live panels, streamed chat, memory search, no token, no foreign driver",
  ignore: browserTestIgnore,
  async fn() {
    await using dir = await tempDir();
    await using model = await startModelServer();
    const daemon = await spawnServe(dir.path, {
      env: {
        ...model.env,
        AGENTD_TOKEN: TOKEN,
        AGENTD_SERVERS: "gateway,memory",
        AGENTD_AGENTS__DEFAULT_MODEL: "openai/default-model",
      },
    });
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${daemon.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${TOKEN}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
      return JSON.parse(text);
    };
    const foreign = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () =>
        new Response("<!doctype html><title>other</title>", {
          headers: { "content-type": "text/html" },
        }),
    );
    try {
      const scribe = await call("POST", "/v1/agents", {
        name: "scribe",
        model: "openai/gpt-test",
        tools: ["memory"],
      });
      const helper = await call("POST", "/v1/agents", {
        name: "helper",
        model: "openai/gpt-test",
      });
      model.script([
        {
          tool_calls: [{
            name: "memory__store_memory",
            arguments: {
              namespace: "scribe",
              key: "sky",
              value: "The sky over Lisbon is blue",
            },
          }],
        },
        { text: "Stored." },
      ]);
      await call("POST", `/v1/agents/${scribe.id}/send`, {
        message: "Remember the sky",
      });
      const team = await call("POST", "/v1/teams", {
        name: "pair",
        agents: [scribe.id, helper.id],
      });
      const run = await call("POST", `/v1/teams/${team.id}/execute`, {
        task: "Describe the sky",
      });
      assert.equal(run.status, "completed");

      await using browser = await launchChromium();
      const page = await browser.newPage();
      const urls: string[] = [];
      const problems: string[] = [];
      const sendTypes: string[] = [];
      page.on("request", (request) => void urls.push(request.url()));
      page.on("response", (response) => {
        if (response.url().endsWith("/send")) {
          sendTypes.push(response.headers()["content-type"] ?? "");
        }
      });
      page.on("console", (message) => {
        // The browser's own /favicon.ico probe is no problem of the page.
        const where = message.location().url ?? "";
        if (message.type() === "error" && !where.endsWith("/favicon.ico")) {
          problems.push(`${message.text()} (${where})`);
        }
      });
      page.on("pageerror", (error) => void problems.push(String(error)));
      await page.setViewport({ width: 1280, height: 800 });

      // Before login: the page is refused.
      const refused = await page.goto(`${daemon.url}/dashboard`);
      assert.equal(refused?.status(), 401);
      problems.length = 0; // that 401 was the point
      const { login_path } = await call("POST", "/dashboard/login-codes");
      const opened = await page.goto(`${daemon.url}${login_path}`, {
        waitUntil: "load",
      });
      assert.equal(opened?.status(), 200);
      assert.equal(page.url(), `${daemon.url}/dashboard`);
      await page.waitForSelector('body[data-loaded="true"]', {
        timeout: 30_000,
      });
      const text = (selector: string) =>
        page.$eval(selector, (node) => node.textContent ?? "");
      const keys = (panel: string) =>
        page.$$eval(
          `#${panel} tr[data-key]`,
          (rows) => rows.map((row) => row.getAttribute("data-key")),
        );

      assert.deepEqual((await keys("servers")).sort(), ["gateway", "memory"]);
      assert.equal(
        await text('#servers tr[data-key="memory"] td.phase'),
        "running",
      );
      assert.match(await text("#gateway"), /memory__search_memory/);
      assert.ok(
        (await page.$$("#gateway table")).length >= 2,
        "upstreams and tools tables",
      );
      assert.deepEqual(await keys("agents"), ["scribe", "helper", "pair"]);
      assert.match(await text('#agents tr[data-key="pair"]'), /scribe, helper/);
      assert.deepEqual(await keys("runs"), [run.id]);
      assert.match(await text(`#runs tr[data-key="${run.id}"]`), /completed/);
      // The gateway runs tasks: the panel is there, empty until a client asks for one.
      assert.match(await text("#tasks"), /No tasks yet/);
      assert.equal(await text('#memory tr[data-key="scribe"] td.num'), "1");

      // Live: a new agent and a new memory show up without a reload.
      await page.evaluate("window.__sameDocument = true");
      await call("POST", "/v1/agents", {
        name: "late",
        model: "openai/gpt-test",
      });
      await page.waitForSelector('#agents tr[data-key="late"]', {
        timeout: 15_000,
      });
      assert.equal(await page.evaluate("window.__sameDocument"), true);

      // Memory search, by keyboard: the search tool through /mcp/memory.
      await page.select("#memory-namespace", "scribe");
      await page.focus("#memory-query");
      await page.keyboard.type("Lisbon sky");
      await page.keyboard.press("Enter");
      await page.waitForSelector('#memory-results tr[data-key="sky"]', {
        timeout: 15_000,
      });
      assert.match(
        await text("#memory-results"),
        /The sky over Lisbon is blue/,
      );

      // Chat: streamed text and a tool call, sent with Ctrl+Enter.
      model.script([
        {
          tool_calls: [{
            name: "memory__search_memory",
            arguments: { namespace: "scribe", query: "sky" },
          }],
        },
        {
          text: "Memory says the sky over Lisbon is blue.",
          chunk_delay_ms: 20,
        },
      ]);
      await page.select("#chat-agent", scribe.id);
      await page.focus("#chat-message");
      await page.keyboard.type("What color is the sky?");
      await page.keyboard.down("Control");
      await page.keyboard.press("Enter");
      await page.keyboard.up("Control");
      await page.waitForSelector('#chat-log .answer[data-done="true"]', {
        timeout: 30_000,
      });
      assert.equal(
        await text('#chat-log .answer[data-done="true"]'),
        "Memory says the sky over Lisbon is blue.",
      );
      assert.match(await text("#chat-log .tool"), /memory__search_memory/);
      assert.match(await text("#chat-log .tool"), /Lisbon/);
      assert.match(await text("#chat-state"), /Done \(end_turn/);
      assert.deepEqual(sendTypes.map((type) => type.split(";")[0]), [
        "text/event-stream",
      ]);
      assert.equal(model.requests.at(-1)?.body.stream, true);

      await saveArtifact("dashboard.png", await page.screenshot());

      // No token anywhere the page or its requests show.
      assert.ok(urls.length > 5);
      for (const url of urls) assert.ok(!url.includes(TOKEN), url);
      assert.ok(!(await page.content()).includes(TOKEN));
      const cookies = await browser.cookies();
      const session = cookies.find((cookie) =>
        cookie.name === "agentd_session"
      );
      assert.equal(session?.httpOnly, true);
      assert.equal(session?.sameSite, "Strict");
      assert.ok(!cookies.some((cookie) => cookie.value.includes(TOKEN)));
      assert.deepEqual(problems, []);

      // A foreign Origin with the session cookie is refused.
      const cookie = `agentd_session=${session?.value ?? ""}`;
      const evil = await fetch(`${daemon.url}/v1/agents/scribe/send`, {
        method: "POST",
        headers: {
          cookie,
          origin: "http://evil.example",
          "content-type": "application/json",
        },
        body: JSON.stringify({ message: "hi" }),
      });
      assert.equal(evil.status, 403);
      assert.match(
        (await evil.json()).error.message,
        /Origin "http:\/\/evil\.example" is not allowed/,
      );

      // Another local page (same site, other origin) cannot drive it either.
      const other = await browser.newPage();
      await other.goto(`http://127.0.0.1:${foreign.addr.port}/`);
      const status = await other.evaluate(
        `fetch(${
          JSON.stringify(`${daemon.url}/v1/agents`)
        }, { method: "POST", credentials: "include", mode: "no-cors",
          headers: { "content-type": "text/plain" }, body: JSON.stringify({ name: "intruder" }) }).then(() => "sent", (e) => String(e))`,
      );
      assert.equal(status, "sent");
      const names = (await call("GET", "/v1/agents")).data.map((
        agent: { name: string },
      ) => agent.name);
      assert.deepEqual(names, ["scribe", "helper", "late"]);
    } finally {
      await foreign.shutdown();
      await daemon.stop();
    }
  },
});
