// /admin is built from every running server's `admin()` section through the
// server runtime contract: any server can add one, a failing one shows its
// error, a stopped one none, and without any section /admin is a 404.

import assert from "node:assert/strict";
import { Hono } from "hono";
import type { GuardVariables } from "../../platform/http_guards.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { adminPage, adminRoutes } from "../../web/admin.ts";
import { HostedServer } from "../../tools/kit/host.ts";
import type { AdminSection } from "../../tools/kit/admin.ts";
import { defineServer } from "../../tools/kit/mod.ts";
import { capturedLog } from "../helpers.ts";

function spec(id: string, admin?: () => AdminSection) {
  return defineServer<null>({
    id,
    namespace: `svc-${id}`,
    title: `Server ${id}`,
    version: "1.0.0",
    tools: [],
    start: () => Promise.resolve({ context: null, admin }),
  });
}

const DESKTOP: AdminSection = {
  title: "Desktop control",
  fields: [
    { key: "display", label: "Display", value: ":99", format: "code" },
    { key: "granted_at", label: "Granted", value: null, format: "time" },
  ],
  tables: [{
    id: "desktop-permissions",
    title: "Permissions",
    row_attribute: "permission",
    row_key: "name",
    columns: [
      { key: "name", label: "Permission" },
      { key: "state", label: "State", format: "state" },
      { key: "checked", label: "Checks", format: "number" },
      { key: "note", label: "Note", format: "error" },
    ],
    rows: [
      { name: "screen", state: "healthy", checked: 12_345, note: null },
      { name: "input", state: "unhealthy", checked: 2, note: "<denied>" },
    ],
    empty: "No permissions.",
  }],
};

async function hosts(): Promise<HostedServer[]> {
  const { log } = capturedLog("error");
  const options = {
    store: new MemoryStore(),
    log,
    config: {},
    dataDir: "/nonexistent/agentd-admin-test",
  };
  return [
    await HostedServer.start(spec("plain"), options),
    await HostedServer.start(spec("desktop", () => DESKTOP), options),
    await HostedServer.start(
      spec("broken", () => {
        throw new Error("view <failed>");
      }),
      options,
    ),
  ];
}

function app(servers: readonly HostedServer[]) {
  return new Hono<{ Variables: GuardVariables }>().route(
    "/admin",
    adminRoutes(() => adminPage(servers, { version: "1.2.3" }), {
      refreshMs: 0,
    }),
  );
}

Deno.test("admin sections: each running server with admin() adds one, as JSON and HTML", async () => {
  const servers = await hosts();
  const json = await (await app(servers).request("/admin?format=json"))
    .json();
  assert.equal(json.version, "1.2.3");
  assert.deepEqual(
    json.sections.map((section: { server: string }) => section.server),
    ["desktop", "broken"],
    "the server without admin() has no section",
  );
  assert.deepEqual(json.sections[0], { server: "desktop", ...DESKTOP });
  assert.deepEqual(json.sections[1].fields, [{
    key: "error",
    label: "Error",
    value: "view <failed>",
    format: "error",
  }]);

  const html = await (await app(servers).request("/admin")).text();
  assert.match(
    html,
    /<section data-section="desktop">\s*<h2>Desktop control<\/h2>/,
  );
  assert.match(html, /<dd><code>:99<\/code><\/dd>/);
  assert.match(html, /<table id="desktop-permissions">/);
  assert.match(
    html,
    /<tr data-permission="input" data-state="unhealthy"><td>input<\/td><td class="state">unhealthy<\/td><td class="num">2<\/td><td class="error">&lt;denied&gt;<\/td><\/tr>/,
  );
  assert.match(html, /<td class="num">12,345<\/td>/);
  assert.match(
    html,
    /<section data-section="broken">[\s\S]*view &lt;failed&gt;/,
  );
  assert.ok(!html.includes("<denied>") && !html.includes("<failed>"));

  // A stopped server's section leaves the page.
  await servers[1].stop(0);
  const after = await (await app(servers).request("/admin?format=json"))
    .json();
  assert.deepEqual(
    after.sections.map((section: { server: string }) => section.server),
    ["broken"],
  );
});

Deno.test("admin sections: no section anywhere is a 404 JSON error", async () => {
  const servers = await hosts();
  const response = await app(servers.slice(0, 1)).request("/admin");
  assert.equal(response.status, 404);
  assert.equal((await response.json()).error.code, "not_found");
});
