// Big results as resources: page HTML over text_budget and a full-page
// screenshot over image_budget come back as a summary plus a resource_link,
// and resources/read returns them intact (the HTML whole, the PNG byte for
// byte as written to a file).

import assert from "node:assert/strict";
import { join } from "node:path";
import { decodeBase64 } from "../../../platform/base64.ts";
import { browserTestIgnore } from "../../browser.ts";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { McpHttpEndpoint } from "../../../tools/kit/transport/http_server.ts";
import { capturedLog, waitFor } from "../../helpers.ts";
import { callTool, startHarness, textOf } from "./harness.ts";
import { startSnapshotSite } from "./snapshot_site.ts";

function linkOf(result: { content: { type: string }[] }): string {
  const link = result.content.find((block) => block.type === "resource_link");
  assert.ok(link, JSON.stringify(result.content).slice(0, 500));
  const uri = Reflect.get(link, "uri");
  assert.equal(typeof uri, "string");
  return String(uri);
}

Deno.test({
  name:
    "browser automation: a 2 MB page HTML and a full-page screenshot come back as resources, intact",
  ignore: browserTestIgnore,
  async fn() {
    await using site = startSnapshotSite();
    const browser = await startHarness({
      config: { text_budget: 20_000, image_budget: 20_000 },
    });
    const { call, ok, client } = browser;
    try {
      await ok("navigate", { url: `${site.url}/huge` });
      const html = await call("get_html");
      assert.ok(!html.isError, textOf(html));
      const total = Number(html.structuredContent?.total_chars);
      assert.ok(total >= 2_000_000, `${total} characters`);
      assert.match(textOf(html), /truncated, \d+ more characters/);
      const uri = linkOf(html);
      assert.match(
        uri,
        /^agentd:\/\/browser-automation\/results\/[0-9a-f-]{36}$/,
      );
      const read = await client.readResource({ uri });
      const text = String(Reflect.get(read.contents[0], "text"));
      assert.equal(read.contents[0].mimeType, "text/html");
      assert.equal(text.length, total);
      assert.match(text, /^<!DOCTYPE html>/i);
      assert.match(text, /<p id="end">END-OF-HUGE-PAGE<\/p><\/body><\/html>$/);

      await ok("navigate", { url: `${site.url}/tall` });
      const shot = await call("screenshot", {
        full_page: true,
        path: "tall.png",
      });
      assert.ok(!shot.isError, textOf(shot));
      assert.ok(!shot.content.some((block) => block.type === "image"));
      assert.match(
        textOf(shot),
        /over the inline budget of 20000\) stored as agentd:/,
      );
      const png = await client.readResource({ uri: linkOf(shot) });
      const blob = decodeBase64(String(Reflect.get(png.contents[0], "blob")));
      const file = await Deno.readFile(
        join(browser.dataDir, "screenshots", "tall.png"),
      );
      assert.equal(blob.length, shot.structuredContent?.bytes);
      assert.deepEqual(blob, file);

      // An unknown URI is a clear error.
      await assert.rejects(
        client.readResource({
          uri:
            "agentd://browser-automation/results/00000000-0000-0000-0000-000000000000",
        }),
        /unknown or expired/,
      );
    } finally {
      await browser.close();
    }
  },
});

Deno.test({
  name:
    "browser automation: result resources end with their HTTP session (DELETE), freeing their memory",
  ignore: browserTestIgnore,
  async fn() {
    await using site = startSnapshotSite();
    const browser = await startHarness({ config: { text_budget: 20_000 } });
    const { log } = capturedLog("warn");
    const endpoint = new McpHttpEndpoint(browser.host, {
      log,
      idleTimeoutMs: 60_000,
    });
    await using http = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen() {} },
      (request) => endpoint.handle(request),
    );
    const url = new URL(`http://127.0.0.1:${http.addr.port}/mcp`);
    const stored = async () => {
      const details = (await browser.health()).details;
      return Number(
        Reflect.get(Reflect.get(Object(details), "results"), "count"),
      );
    };
    const open = async () => {
      const client = new Client({ name: "expiry", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(url);
      await client.connect(transport);
      return { client, transport };
    };
    try {
      const first = await open();
      const navigated = await callTool(first.client, "navigate", {
        url: `${site.url}/huge`,
      });
      assert.ok(!navigated.isError, textOf(navigated));
      const html = await callTool(first.client, "get_html");
      const uri = linkOf(html);
      assert.equal(await stored(), 1);
      const read = await first.client.readResource({ uri });
      assert.match(
        String(Reflect.get(read.contents[0], "text")),
        /END-OF-HUGE/,
      );
      assert.equal(endpoint.sessionCount, 1);

      await first.transport.terminateSession();
      await first.client.close();
      assert.equal(endpoint.sessionCount, 0);
      await waitFor(stored, (count) => count === 0);

      const second = await open();
      try {
        await assert.rejects(
          second.client.readResource({ uri }),
          /unknown or expired.*MCP session/,
        );
      } finally {
        await second.client.close();
      }
    } finally {
      await endpoint.close();
      await browser.close();
    }
  },
});
