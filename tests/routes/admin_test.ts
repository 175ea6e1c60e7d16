// GET /admin through `app.request()`: content negotiation, the HTML page's
// DOM contract and escaping, its security headers, and 405 for other methods.

import assert from "node:assert/strict";
import {
  adminApp,
  adminPageOf,
  adminView,
  HOSTILE_ERROR,
  SHORTENED_NAME,
} from "./admin_fixture.ts";

const app = adminApp();

async function page(headers: Record<string, string> = {}): Promise<{
  response: Response;
  html: string;
}> {
  const response = await app.request("/admin", { headers });
  return { response, html: await response.text() };
}

/** The `<tr …>` element of one table row, or undefined. */
function row(
  html: string,
  attribute: string,
  value: string,
): string | undefined {
  const start = html.indexOf(`<tr ${attribute}="${value}"`);
  if (start === -1) return undefined;
  return html.slice(start, html.indexOf("</tr>", start) + 5);
}

/** The gateway's servers and tools as the JSON page carries them. */
function gatewayRows(page: ReturnType<typeof adminPageOf>) {
  const section = page.sections.find((found) => found.server === "gateway");
  const rows = (id: string) =>
    section?.tables.find((table) => table.id === id)?.rows;
  return { servers: rows("servers"), tools: rows("tools") };
}

Deno.test("admin: Accept application/json answers the view as JSON", async () => {
  const response = await app.request("/admin", {
    headers: { accept: "application/json" },
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /application\/json/);
  assert.equal(response.headers.get("cache-control"), "no-store");
  const page = await response.json();
  assert.deepEqual(page, adminPageOf(adminView()));
  // Every server and tool of the gateway's view, field for field.
  assert.deepEqual(gatewayRows(page), {
    servers: adminView().servers,
    tools: adminView().tools,
  });
});

Deno.test("admin: ?format=json wins over a browser's Accept", async () => {
  const response = await app.request("/admin?format=json", {
    headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" },
  });
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), adminPageOf(adminView()));
});

Deno.test("admin: HTML without Accept, for browsers, and when html comes first", async () => {
  for (
    const accept of [
      undefined,
      "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
      "text/html, application/json",
      "*/*",
    ]
  ) {
    const { response, html } = await page(
      accept === undefined ? {} : { accept },
    );
    assert.equal(response.status, 200, `Accept: ${accept}`);
    assert.match(response.headers.get("content-type") ?? "", /^text\/html/);
    assert.match(html, /^<!doctype html>/);
  }
});

Deno.test("admin: one row per server with its state, one per tool", async () => {
  const { html } = await page();
  assert.match(html, /<table id="servers">/);
  assert.match(html, /<table id="tools">/);
  for (const server of adminView().servers) {
    const tr = row(html, "data-server", server.name);
    assert.ok(tr, `row for ${server.name}`);
    assert.ok(tr.includes(`data-state="${server.state}"`), tr);
    assert.ok(tr.includes(`<td class="state">${server.state}</td>`), tr);
  }
  assert.equal(html.match(/<tr data-server=/g)?.length, 3);
  const stdio = row(html, "data-server", "files-2") ?? "";
  assert.match(stdio, />4242</);
  assert.match(
    stdio,
    />npx -y @modelcontextprotocol\/server-filesystem \/tmp</,
  );
  assert.match(row(html, "data-server", "everything") ?? "", />25\.0%</);
  assert.match(row(html, "data-server", "memory") ?? "", />1,234</);

  for (const tool of adminView().tools) {
    assert.ok(row(html, "data-tool", tool.name), `row for ${tool.name}`);
  }
  assert.equal(html.match(/<tr data-tool=/g)?.length, 3);
  assert.match(row(html, "data-tool", SHORTENED_NAME) ?? "", /shortened/);
  assert.doesNotMatch(
    row(html, "data-tool", "everything__echo") ?? "",
    /class="shortened"/,
  );
  assert.match(html, /9\.8\.7/);
  assert.match(html, /least in flight/);
});

Deno.test("admin: every value is HTML-escaped", async () => {
  const { html } = await page();
  assert.ok(!html.includes("<script>alert(1)"));
  assert.ok(!html.includes("<b>"));
  assert.ok(
    html.includes(
      "Cannot reach upstream &quot;everything&quot;: &lt;script&gt;alert(1)&lt;/script&gt; &amp; more",
    ),
  );
  assert.ok(
    html.includes(
      "Echoes &lt;b&gt;&quot;text&quot;&lt;/b&gt; &amp; &#39;quotes&#39; back.",
    ),
  );
  assert.ok(HOSTILE_ERROR.includes("<script>"));
});

Deno.test("admin: the page sends a nonce CSP, no-store and nosniff", async () => {
  const first = await page();
  const second = await page();
  const csp = first.response.headers.get("content-security-policy") ?? "";
  const nonce = csp.match(/script-src 'nonce-([^']+)'/)?.[1];
  assert.ok(nonce, csp);
  assert.equal(
    csp,
    `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; ` +
      "connect-src 'self'; frame-ancestors 'none'",
  );
  assert.notEqual(
    second.response.headers.get("content-security-policy"),
    csp,
    "a fresh nonce per response",
  );
  assert.equal(first.response.headers.get("cache-control"), "no-store");
  assert.equal(
    first.response.headers.get("x-content-type-options"),
    "nosniff",
  );
  // Every inline element carries the nonce; nothing is loaded from elsewhere.
  for (const tag of first.html.match(/<(script|style)\b[^>]*>/g) ?? []) {
    assert.ok(tag.includes(`nonce="${nonce}"`), tag);
  }
  assert.equal(first.html.match(/<script\b/g)?.length, 1);
  assert.doesNotMatch(first.html, /\b(src|href)=/);
});

Deno.test("admin: refreshMs 0 leaves the script out", async () => {
  const response = await adminApp(undefined, { refreshMs: 0 }).request(
    "/admin",
  );
  const html = await response.text();
  assert.doesNotMatch(html, /<script\b/);
  assert.match(html, /<tr data-server="memory"/);
});

Deno.test("admin: other methods get a 405 JSON error", async () => {
  for (const method of ["POST", "PUT", "DELETE"]) {
    const response = await app.request("/admin", { method });
    assert.equal(response.status, 405, method);
    assert.equal(response.headers.get("allow"), "GET, HEAD");
    const body = await response.json();
    assert.equal(body.error.code, "method_not_allowed");
    assert.match(body.error.message, new RegExp(`${method} is not allowed`));
  }
});

Deno.test("admin: HEAD answers like GET without a body", async () => {
  const response = await app.request("/admin", { method: "HEAD" });
  assert.equal(response.status, 200);
  assert.equal(await response.text(), "");
});

Deno.test("admin: ?format=fragment is the page's <main> alone, for its refresh", async () => {
  const response = await app.request("/admin?format=fragment");
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/html/);
  assert.equal(response.headers.get("cache-control"), "no-store");
  const html = await response.text();
  assert.match(html, /^<main id="admin">[\s\S]*<\/main>$/);
  assert.doesNotMatch(html, /<(script|style|html|head)\b/);
  assert.match(html, /<tr data-server="everything" data-state="unhealthy">/);
  assert.ok(!html.includes("<script>alert(1)"));
});
