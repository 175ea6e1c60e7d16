// Every browser automation tool on real pages in real Chromium, through an
// in-process MCP client: forms reach the server, options are chosen, links
// with and without hidden ones, scrolling, cookies, scripts, screenshots.

import assert from "node:assert/strict";
import { join } from "node:path";
import { browserTestIgnore } from "../../browser.ts";
import {
  browserOf,
  imagesOf,
  pngSize,
  startHarness,
  textOf,
} from "./harness.ts";
import { LONG_TEXT_CHARS, startSite } from "./site.ts";

Deno.test({
  name: "browser automation: every tool on real pages in Chromium",
  ignore: browserTestIgnore,
  async fn(t) {
    const site = startSite();
    const browser = await startHarness({
      config: { text_budget: 20_000 },
    });
    const { call, ok } = browser;
    try {
      await t.step(
        "lazy launch: nothing runs until the first call",
        async () => {
          const health = await browser.health();
          assert.equal(browserOf(health).state, "not_started");
          assert.equal(health.degraded, undefined);
        },
      );

      await t.step("navigate, get_text, get_html", async () => {
        const opened = await ok("navigate", { url: `${site.url}/` });
        assert.equal(opened.url, `${site.url}/`);
        assert.equal(opened.title, "Home");
        assert.equal(opened.status, 200);
        assert.equal(typeof opened.load_ms, "number");

        const text = await call("get_text", { selector: "#intro" });
        assert.equal(textOf(text), "Plain text with bold and a form link.");
        assert.equal(text.structuredContent?.matches, 1);
        const html = await ok("get_html", { selector: "#title" });
        assert.equal(html.text, '<h1 id="title">Welcome home</h1>');
        const page = await ok("get_html");
        assert.match(String(page.text), /^<!DOCTYPE html><html><head>/i);

        // text= and role= selectors
        assert.equal(
          (await ok("get_text", { selector: "text=Welcome home" })).text,
          "Welcome home",
        );
        assert.equal(
          (await ok("get_text", {
            selector: 'role=button[name="Pretend button"]',
          })).text,
          "press",
        );
        assert.equal(
          (await ok("get_text", { selector: "xpath=//h1" })).text,
          "Welcome home",
        );
      });

      await t.step(
        "click_element by selector, role and coordinates",
        async () => {
          const clicked = await ok("click_element", { selector: "#save" });
          assert.match(String(clicked.clicked), /<button#save> "Save"/);
          assert.equal(clicked.navigated, false);
          assert.equal(
            (await ok("get_text", { selector: "#status" })).text,
            "saved",
          );

          await ok("click_element", {
            selector: 'role=button[name="Pretend button"]',
          });
          assert.equal(
            (await ok("get_text", { selector: "#pretend" })).text,
            "pressed",
          );

          // A point: the middle of the Save button, located with a script.
          await ok("execute_js", {
            script: "document.getElementById('status').textContent = 'idle'",
          });
          const box = await ok("execute_js", {
            script:
              "const r = document.getElementById('save').getBoundingClientRect(); ({x: r.x + r.width / 2, y: r.y + r.height / 2})",
          });
          const point = box.result as { x: number; y: number };
          await ok("click_element", { x: point.x, y: point.y });
          assert.equal(
            (await ok("get_text", { selector: "#status" })).text,
            "saved",
          );

          // A link click waits for the page it opens.
          const link = await ok("click_element", {
            selector: "text=form link",
          });
          assert.equal(link.navigated, true);
          assert.equal(link.url, `${site.url}/form`);
          assert.equal(link.title, "Form");
        },
      );

      await t.step("type_text appends and fires input events", async () => {
        const typed = await ok("type_text", {
          selector: "#name",
          text: " new",
        });
        assert.equal(typed.value, "old new");
        assert.equal(
          (await ok("get_text", { selector: "#echo" })).text,
          "typed:old new",
        );
      });

      await t.step(
        "fill_form, select_option, submit_form: the server receives the values",
        async () => {
          const filled = await ok("fill_form", {
            fields: [
              { selector: "#name", value: "Ada Lovelace" },
              { selector: "#email", value: "ada@example.com" },
              { selector: "#bio", value: "line one\nline two" },
              { selector: "#plan", value: "Team tier" },
              { selector: "#terms", value: "true" },
              { selector: "#size-l", value: "true" },
              { selector: "#when", value: "2026-03-04" },
            ],
          });
          assert.deepEqual(
            (filled.filled as { kind: string }[]).map((field) => field.kind),
            [
              "text",
              "email",
              "textarea",
              "select",
              "checkbox",
              "radio",
              "date",
            ],
          );
          const selected = await ok("select_option", {
            selector: "#plan",
            value: "pro",
          });
          assert.deepEqual(selected.selected, {
            value: "pro",
            label: "Pro tier",
          });
          const byLabel = await ok("select_option", {
            selector: "#plan",
            value: "Free tier",
          });
          assert.deepEqual(byLabel.selected, {
            value: "free",
            label: "Free tier",
          });
          await ok("select_option", { selector: "#plan", value: "pro" });
          const missing = await call("select_option", {
            selector: "#plan",
            value: "gold",
          });
          assert.equal(missing.isError, true);
          assert.match(
            textOf(missing),
            /no option with value or label "gold"; options: free \(Free tier\), pro \(Pro tier\), team \(Team tier\)/,
          );

          const submitted = await ok("submit_form", { selector: "#go" });
          assert.equal(submitted.navigated, true);
          assert.equal(submitted.title, "Thanks");
          assert.equal(submitted.method, "post");
          assert.equal(site.submissions.length, 1);
          assert.deepEqual(Object.fromEntries(site.submissions[0]), {
            name: "Ada Lovelace",
            email: "ada@example.com",
            bio: "line one\r\nline two",
            plan: "pro",
            terms: "yes",
            size: "l",
            when: "2026-03-04",
            via: "button",
          });
          assert.equal(
            (await ok("get_text", { selector: "#thanks" })).text,
            "Thanks Ada Lovelace",
          );

          // Validation runs: a required field left empty is named, nothing is sent.
          await ok("navigate", { url: `${site.url}/form` });
          const invalid = await call("submit_form", { selector: "#required" });
          assert.equal(invalid.isError, true);
          assert.match(textOf(invalid), /did not pass validation: must: /);
          assert.equal(site.submissions.length, 1);
          // Without a selector: the focused field's form.
          await ok("type_text", { selector: "#name", text: "!" });
          const plain = await ok("submit_form");
          assert.equal(plain.title, "Thanks");
          assert.equal(site.submissions[1].get("name"), "old!");
        },
      );

      await t.step(
        "get_links leaves out hidden links unless asked",
        async () => {
          await ok("navigate", { url: `${site.url}/` });
          const visible = await ok("get_links");
          assert.deepEqual(visible.links, [
            { text: "form link", href: `${site.url}/form` },
            { text: "One", href: `${site.url}/one` },
            { text: "Second page", href: `${site.url}/two` },
          ]);
          assert.equal(visible.hidden_left_out, 3);
          const all = await ok("get_links", { include_hidden: true });
          const links = all.links as { href: string; visible: boolean }[];
          assert.equal(links.length, 6);
          assert.deepEqual(
            links.filter((link) => !link.visible).map((link) => link.href),
            [
              `${site.url}/hidden-display`,
              `${site.url}/hidden-visibility`,
              `${site.url}/zero`,
            ],
          );
        },
      );

      await t.step("scroll changes window.scrollY", async () => {
        await ok("navigate", { url: `${site.url}/tall` });
        const down = await ok("scroll", { direction: "down", amount: 500 });
        assert.equal(down.previous_scroll_y, 0);
        assert.equal(down.scroll_y, 500);
        const y = await ok("execute_js", { script: "window.scrollY" });
        assert.equal(y.result, 500);
        const page = await ok("scroll", { direction: "down" });
        assert.equal(page.amount, 800, "default: one viewport height");
        assert.equal(page.scroll_y, 1300);
        const up = await ok("scroll", { direction: "up", amount: 5000 });
        assert.equal(up.scroll_y, 0);
        assert.equal(up.at_top, true);
      });

      await t.step(
        "get_cookies returns the server's cookies, filtered by domain",
        async () => {
          await ok("navigate", { url: `${site.url}/cookies` });
          await ok("navigate", {
            url: `http://localhost:${site.port}/cookies?host=localhost`,
          });
          const all = await ok("get_cookies");
          const names = (all.cookies as { name: string; domain: string }[])
            .map((cookie) => `${cookie.name}@${cookie.domain}`).sort();
          assert.deepEqual(names, [
            "session@127.0.0.1",
            "session@localhost",
            "theme@127.0.0.1",
            "theme@localhost",
          ]);
          const local = await ok("get_cookies", { domain: "localhost" });
          const cookies = local.cookies as Record<string, unknown>[];
          assert.deepEqual(cookies.map((cookie) => cookie.name).sort(), [
            "session",
            "theme",
          ]);
          const session = cookies.find((cookie) => cookie.name === "session");
          assert.equal(session?.value, "abc123");
          assert.equal(session?.http_only, true);
          assert.equal(session?.expires, null);
          const theme = cookies.find((cookie) => cookie.name === "theme");
          assert.ok(typeof theme?.expires === "string");
          assert.equal(
            (await ok("get_cookies", { domain: "example.org" })).count,
            0,
          );
        },
      );

      await t.step(
        "execute_js: values, objects, promises, return, DOM nodes",
        async () => {
          await ok("navigate", { url: `${site.url}/` });
          assert.deepEqual(
            await ok("execute_js", { script: "document.title" }),
            {
              type: "string",
              result: "Home",
            },
          );
          assert.equal(
            (await ok("execute_js", { script: "6 * 7" })).result,
            42,
          );
          assert.deepEqual(
            (await ok("execute_js", {
              script: "({a: 1, list: [1, 'two', null], nested: {ok: true}})",
            })).result,
            { a: 1, list: [1, "two", null], nested: { ok: true } },
          );
          assert.equal(
            (await ok("execute_js", {
              script:
                "new Promise((resolve) => setTimeout(() => resolve('later'), 50))",
            })).result,
            "later",
          );
          assert.equal(
            (await ok("execute_js", {
              script: "const r = await fetch('/one'); r.status",
            })).result,
            200,
          );
          // Console-like: the same const twice is fine.
          assert.equal(
            (await ok("execute_js", { script: "const r = 5; r" })).result,
            5,
          );
          assert.equal(
            (await ok("execute_js", { script: "const n = 3;\nreturn n * 2;" }))
              .result,
            6,
          );
          const undef = await ok("execute_js", { script: "undefined" });
          assert.deepEqual(undef, { type: "undefined", result: null });
          // Dialogs would block the page: alerts are accepted, questions declined, and said so.
          const dialog = await call("execute_js", {
            script: "alert('hello'); confirm('sure?')",
          });
          assert.equal(dialog.structuredContent?.result, false);
          assert.match(
            textOf(dialog),
            /Note: The page showed an alert dialog \("hello"\); it was accepted/,
          );
          assert.match(
            textOf(dialog),
            /Note: The page showed a confirm dialog \("sure\?"\); it was dismissed/,
          );
          const node = await ok("execute_js", { script: "document.body" });
          assert.equal(node.type, "node");
          assert.equal(node.result, "body");
        },
      );

      await t.step(
        "screenshot: viewport vs full page, image content, files",
        async () => {
          await ok("navigate", { url: `${site.url}/tall` });
          const viewport = await call("screenshot");
          assert.ok(!viewport.isError, textOf(viewport));
          const [shot] = imagesOf(viewport);
          assert.deepEqual(pngSize(shot), { width: 1280, height: 800 });
          assert.equal(viewport.structuredContent?.path, null);
          const full = await call("screenshot", { full_page: true });
          const fullSize = pngSize(imagesOf(full)[0]);
          assert.equal(fullSize.width, 1280);
          assert.ok(fullSize.height > 3000, `full page ${fullSize.height} px`);

          const saved = await call("screenshot", { path: "shots/tall.png" });
          assert.ok(!saved.isError, textOf(saved));
          const path = join(
            browser.dataDir,
            "screenshots",
            "shots",
            "tall.png",
          );
          assert.equal(
            saved.structuredContent?.path,
            await Deno.realPath(path),
          );
          assert.deepEqual(
            pngSize(await Deno.readFile(path)),
            { width: 1280, height: 800 },
          );
        },
      );

      await t.step("long text is paged by offset", async () => {
        await ok("navigate", { url: `${site.url}/long` });
        const first = await call("get_text", { selector: "#long" });
        const head = first.structuredContent ?? {};
        assert.equal(head.total_chars, LONG_TEXT_CHARS);
        assert.equal(head.next_offset, 20_000);
        assert.equal(String(head.text).length, 20_000);
        assert.match(
          textOf(first),
          new RegExp(
            `… truncated, ${
              LONG_TEXT_CHARS - 20_000
            } more characters; call again with offset=20000$`,
          ),
        );
        let offset = 20_000;
        let text = String(head.text);
        while (offset > 0) {
          const next = await ok("get_text", { selector: "#long", offset });
          text += String(next.text);
          offset = typeof next.next_offset === "number" ? next.next_offset : 0;
        }
        assert.equal(text.length, LONG_TEXT_CHARS);
        assert.match(text, /^Line 0000 of the long page\./);
        assert.match(text, /Line 2999 of the long page\.$/);
      });

      await t.step("wait_for an element that appears later", async () => {
        await ok("navigate", { url: `${site.url}/late` });
        const waited = await ok("wait_for", {
          selector: "#late",
          timeout: 5000,
        });
        assert.equal(waited.found, true);
        assert.equal(
          (await ok("get_text", { selector: "#late" })).text,
          "arrived",
        );
      });

      await t.step(
        "/health: connected, launched, pages, load times",
        async () => {
          const health = await browser.health();
          const state = browserOf(health);
          assert.equal(state.state, "connected");
          assert.equal(state.connected, true);
          assert.equal(state.mode, "launched");
          assert.match(String(state.version), /Chrome\/\d+/);
          assert.equal(state.pages, 1);
          assert.equal(state.sessions, 1);
          assert.equal(state.restarts, 0);
          const details = health.details as Record<string, unknown>;
          const loads = details.page_loads as Record<string, unknown>;
          assert.ok(Number(loads.count) >= 8, JSON.stringify(loads));
          assert.equal(details.status, "ok");
          // Every action is logged with the page before and after.
          const action = browser.logs.find((line) =>
            line.event === "browser_action" && line.tool === "click_element" &&
              line.navigated !== undefined || line.event === "browser_action" &&
              line.tool === "submit_form" && line.ok === true
          );
          assert.ok(action, "a browser_action log line");
          assert.deepEqual(Object.keys(action.before as object).sort(), [
            "title",
            "url",
          ]);
          assert.equal((action.after as { title: string }).title, "Thanks");
          assert.equal(typeof action.duration_ms, "number");
        },
      );
    } finally {
      await browser.close();
      await site.close();
    }
  },
});
