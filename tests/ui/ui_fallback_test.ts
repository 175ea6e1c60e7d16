// `agentd ui` where no native window can open: no display, or no webview
// library. It says why, opens the default browser (a fake xdg-open here) on
// a one-time login URL, and exits 0. Also: the login code works once, the
// session cookie is HttpOnly/SameSite, and a foreign Origin cannot use it.

import assert from "node:assert/strict";
import { join } from "node:path";
import { freePort, spawnServe, tempDir, waitFor } from "../helpers.ts";
import {
  cookieOf,
  fakeOpener,
  finished,
  headlessEnv,
  spawnUi,
  UI_TOKEN,
} from "./ui_support.ts";

Deno.test("ui: without a display it opens the browser on a one-time login and exits 0", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path, {
    env: { AGENTD_TOKEN: UI_TOKEN, AGENTD_SERVERS: "gateway,memory" },
  });
  try {
    const opener = await fakeOpener(dir.path);
    const env = headlessEnv();
    const result = await finished(spawnUi(
      ["--port", String(daemon.port), "--data-dir", dir.path],
      {
        ...env,
        PATH: `${opener.bin}:${env.PATH ?? ""}`,
        AGENTD_TOKEN: UI_TOKEN,
      },
    ));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /no native window: no display/);
    assert.match(result.stdout, /Opening the dashboard in your browser/);
    const [url, ...more] = await opener.opened();
    assert.deepEqual(more, []);
    assert.match(
      url ?? "",
      new RegExp(`^${daemon.url}/dashboard/login\\?code=[0-9a-f]{48}$`),
    );
    for (const text of [url ?? "", result.stdout, result.stderr]) {
      assert.ok(!text.includes(UI_TOKEN), "the token leaked");
    }

    // The code opens a session once; the cookie is HttpOnly and SameSite.
    const login = await fetch(url ?? "", { redirect: "manual" });
    await login.body?.cancel();
    assert.equal(login.status, 303);
    assert.equal(login.headers.get("location"), "/dashboard");
    const setCookie = login.headers.get("set-cookie") ?? "";
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Strict/);
    const cookie = cookieOf(login);
    const again = await fetch(url ?? "", { redirect: "manual" });
    assert.equal(again.status, 401);
    assert.match((await again.json()).error.message, /used or expired/);

    const page = await fetch(`${daemon.url}/dashboard`, {
      headers: { cookie },
    });
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.ok(!html.includes(UI_TOKEN));
    assert.match(
      page.headers.get("content-security-policy") ?? "",
      /script-src 'nonce-[^']+'; connect-src 'self'/,
    );
    const anonymous = await fetch(`${daemon.url}/dashboard`);
    await anonymous.body?.cancel();
    assert.equal(anonymous.status, 401);

    // The cookie reads the API; changes need the daemon's own Origin.
    const agents = await fetch(`${daemon.url}/v1/agents`, {
      headers: { cookie },
    });
    await agents.body?.cancel();
    assert.equal(agents.status, 200);
    const create = (origin?: string) =>
      fetch(`${daemon.url}/v1/agents`, {
        method: "POST",
        headers: {
          cookie,
          "content-type": "application/json",
          ...(origin ? { origin } : {}),
        },
        body: JSON.stringify({ name: "scribe", model: "openai/gpt-test" }),
      });
    for (const origin of [undefined, "http://evil.example", "null"]) {
      const refused = await create(origin);
      await refused.body?.cancel();
      assert.equal(refused.status, 403, `origin ${origin}`);
    }
    const listed = await fetch(`${daemon.url}/v1/agents`, {
      headers: { cookie },
    });
    assert.deepEqual((await listed.json()).data, []);
    const own = await create(daemon.url);
    await own.body?.cancel();
    assert.equal(own.status, 201);

    // Agent tokens cannot open sessions; a bad token gets no code.
    const bad = await fetch(`${daemon.url}/dashboard/login-codes`, {
      method: "POST",
      headers: { authorization: "Bearer wrong-token-0123456789" },
    });
    await bad.body?.cancel();
    assert.equal(bad.status, 401);
  } finally {
    await daemon.stop();
  }
});

Deno.test("ui: without the webview library it names libwebkitgtk-6.0-4 and falls back", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path, {
    env: { AGENTD_SERVERS: "gateway" },
  });
  try {
    const opener = await fakeOpener(dir.path);
    const env = headlessEnv();
    const result = await finished(spawnUi(
      ["--port", String(daemon.port), "--data-dir", dir.path],
      {
        ...env,
        PATH: `${opener.bin}:${env.PATH ?? ""}`,
        DISPLAY: ":4242",
        AGENTD_WEBVIEW_LIB: join(dir.path, "missing", "libwebview-x64.so"),
      },
    ));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /cannot load the webview library/);
    assert.match(result.stdout, /libwebkitgtk-6\.0-4/);
    const opened = await opener.opened();
    assert.equal(opened.length, 1);
    assert.ok(opened[0]?.startsWith(`${daemon.url}/dashboard/login?code=`));
  } finally {
    await daemon.stop();
  }
});

Deno.test("ui: with no daemon running it starts one, and stops it on SIGTERM", async () => {
  await using dir = await tempDir();
  const opener = await fakeOpener(dir.path);
  const port = freePort();
  const env = headlessEnv();
  const child = spawnUi(
    [
      "--browser",
      "--port",
      String(port),
      "--data-dir",
      dir.path,
      "--servers",
      "gateway",
    ],
    { ...env, PATH: `${opener.bin}:${env.PATH ?? ""}` },
  );
  const done = finished(child);
  const [url] = await waitFor(
    () => opener.opened(),
    (opened) => opened.length === 1,
    60_000,
  );
  assert.ok(url?.startsWith(`http://127.0.0.1:${port}/dashboard/login?code=`));
  const health = await fetch(`http://127.0.0.1:${port}/health`);
  assert.equal(health.status, 200);
  await health.body?.cancel();
  child.kill("SIGTERM");
  const result = await done;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /no daemon at .*; starting one/);
  assert.match(result.stdout, /--browser was given/);
  await assert.rejects(fetch(`http://127.0.0.1:${port}/health`));
});
