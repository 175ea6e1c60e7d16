// Bad input on real pages: each failure is an isError result that names the
// step and the page and carries a screenshot, and the next call works.
// Screenshot files land only inside the allowed directories.

import assert from "node:assert/strict";
import { join } from "node:path";
import { browserTestIgnore } from "../../browser.ts";
import { imagesOf, pngSize, startHarness, textOf } from "./harness.ts";
import { startSite } from "./site.ts";

Deno.test({
  name:
    "browser automation: bad input gives isError with the page URL and a screenshot; the next call works",
  ignore: browserTestIgnore,
  async fn(t) {
    const site = startSite();
    const browser = await startHarness({
      config: { action_timeout_ms: 2_000 },
    });
    const { call, ok } = browser;
    /** Asserts an error result with a message matching `message` and a viewport screenshot. */
    const failsWith = async (
      name: string,
      args: Record<string, unknown>,
      message: RegExp,
    ) => {
      const result = await call(name, args);
      assert.equal(result.isError, true, `${name} should fail`);
      assert.match(textOf(result), message);
      const images = imagesOf(result);
      assert.equal(images.length, 1, "one screenshot with the error");
      assert.deepEqual(pngSize(images[0]), { width: 1280, height: 800 });
      // The next call on the same tab works.
      assert.equal((await ok("execute_js", { script: "1 + 1" })).result, 2);
      return textOf(result);
    };
    try {
      await ok("navigate", { url: `${site.url}/` });
      const home = `Page: ${site.url}/ \\("Home"\\)`;

      await t.step("invalid URLs", async () => {
        await failsWith(
          "navigate",
          { url: "example.com/path" },
          new RegExp(
            `^navigate failed: "example.com/path" is not an absolute URL \\(did you mean https://example.com/path\\?\\); give one like https://example.com/\\. ${home}`,
          ),
        );
        await failsWith(
          "navigate",
          { url: "file:///etc/passwd" },
          /Cannot open file: URLs \("file:\/\/\/etc\/passwd"\): navigate opens http, https, about: and data: URLs/,
        );
        await failsWith(
          "navigate",
          { url: "javascript:alert(1)" },
          /Cannot open javascript: URLs/,
        );
        // Nothing listens: the network error and the URL.
        const closed = `http://127.0.0.1:${site.port + 1}/`;
        const refused = await call("navigate", { url: closed });
        assert.equal(refused.isError, true);
        assert.match(
          textOf(refused),
          new RegExp(`Cannot open ${closed}: net::ERR_CONNECTION_REFUSED`),
        );
        assert.equal(imagesOf(refused).length, 1);
        await ok("navigate", { url: `${site.url}/` });
      });

      await t.step(
        "a selector that matches nothing, or does not parse",
        async () => {
          await failsWith(
            "click_element",
            { selector: "#nope" },
            new RegExp(
              `^click_element failed: No element matches selector "#nope" \\(waited 500 ms\\); check it with get_html, or wait_for it first\\. ${home}`,
            ),
          );
          await failsWith(
            "get_text",
            { selector: "text=Not on this page" },
            /No element matches selector "text=Not on this page"/,
          );
          await failsWith(
            "get_text",
            { selector: "div[[" },
            /Invalid selector "div\[\[": .*Use a CSS selector, text=Visible text/,
          );
          await failsWith(
            "fill_form",
            {
              fields: [
                { selector: "#save", value: "x" },
              ],
            },
            /Cannot fill fields\[0\] \(selector "#save"\): It is a <button>, not a form field/,
          );
        },
      );

      await t.step(
        "click_element needs a selector, or both x and y",
        async () => {
          await failsWith(
            "click_element",
            { x: 10 },
            /click_element needs a selector, or both x and y/,
          );
          await failsWith(
            "click_element",
            { selector: "#save", x: 1, y: 2 },
            /Give either selector, or x and y, not both/,
          );
        },
      );

      await t.step("wait_for times out", async () => {
        const message = await failsWith(
          "wait_for",
          { selector: "#never", timeout: 300 },
          /^wait_for failed: Timed out after 300 ms waiting for selector "#never" to be visible\./,
        );
        assert.match(message, new RegExp(home));
        await failsWith(
          "wait_for",
          { selector: "a[href='/hidden-display']", timeout: 200 },
          /an element matches but is hidden/,
        );
      });

      await t.step("a script that throws", async () => {
        await failsWith(
          "execute_js",
          { script: "const x = 1;\nthrow new Error('boom')" },
          /^execute_js failed: The script threw Error: boom \(line 2, column 7\)\. Page: /,
        );
        // A script with a top-level return runs as a function body; lines still match.
        await failsWith(
          "execute_js",
          { script: "const y = {};\nreturn y.z.w;" },
          /The script threw TypeError: Cannot read properties of undefined \(reading 'w'\) \(line 2, column 12\)/,
        );
        await failsWith(
          "execute_js",
          { script: "await Promise.reject(new TypeError('nope'))" },
          /The script threw TypeError: nope/,
        );
        await failsWith(
          "execute_js",
          { script: "function (" },
          /The script threw SyntaxError: /,
        );
      });

      await t.step(
        "a script that never ends is cut off by the action timeout",
        async () => {
          await failsWith(
            "execute_js",
            { script: "await new Promise(() => {})" },
            /The script did not finish within 2000 ms \(action_timeout_ms\)/,
          );
          await failsWith(
            "execute_js",
            { script: "while (true) {}" },
            /The script did not finish within 2000 ms/,
          );
        },
      );

      await t.step(
        "unknown arguments are refused before the handler",
        async () => {
          const result = await call("navigate", {
            url: `${site.url}/`,
            wait: true,
          });
          assert.equal(result.isError, true);
          assert.match(
            textOf(result),
            /Invalid arguments for navigate: .*wait/,
          );
        },
      );

      await t.step(
        "screenshot paths: inside the allowed dirs only",
        async () => {
          const allowed = join(browser.dataDir, "screenshots");
          const inside = await call("screenshot", {
            path: join(allowed, "a.png"),
          });
          assert.ok(!inside.isError, textOf(inside));
          assert.ok((await Deno.stat(join(allowed, "a.png"))).isFile);

          const outside = join(browser.dataDir, "outside.png");
          await failsWith(
            "screenshot",
            { path: outside },
            /Cannot write the screenshot to ".*outside\.png": it resolves to .*outside\.png, outside the allowed directories/,
          );
          await failsWith(
            "screenshot",
            { path: "../escape.png" },
            /outside the allowed directories/,
          );
          await failsWith(
            "screenshot",
            { path: "shot.txt" },
            /the file name must end in \.png/,
          );
          // A link inside the allowed dir that points out of it.
          await Deno.symlink(browser.dataDir, join(allowed, "link"));
          await failsWith(
            "screenshot",
            { path: "link/escape.png" },
            /outside the allowed directories/,
          );
          await Deno.writeTextFile(join(browser.dataDir, "target.png"), "keep");
          await Deno.symlink(
            join(browser.dataDir, "target.png"),
            join(allowed, "file-link.png"),
          );
          await failsWith(
            "screenshot",
            { path: "file-link.png" },
            /outside the allowed directories|is a symbolic link/,
          );
          assert.equal(
            await Deno.readTextFile(join(browser.dataDir, "target.png")),
            "keep",
          );
          for (const name of ["outside.png", "escape.png"]) {
            await assert.rejects(Deno.stat(join(browser.dataDir, name)));
          }
        },
      );
    } finally {
      await browser.close();
      await site.close();
    }
  },
});

Deno.test({
  name: "browser automation: screenshot_dirs config allows other directories",
  ignore: browserTestIgnore,
  async fn() {
    const extra = await Deno.makeTempDir({ prefix: "agentd-shots-" });
    const browser = await startHarness({
      config: { screenshot_dirs: [extra] },
    });
    try {
      await browser.ok("navigate", { url: "data:text/html,<h1>shot</h1>" });
      const saved = await browser.ok("screenshot", { path: "one.png" });
      assert.equal(saved.path, join(await Deno.realPath(extra), "one.png"));
      const bytes = await Deno.readFile(join(extra, "one.png"));
      assert.deepEqual(pngSize(bytes), { width: 1280, height: 800 });
      // The default directory is no longer allowed.
      const denied = await browser.call("screenshot", {
        path: join(browser.dataDir, "screenshots", "two.png"),
      });
      assert.equal(denied.isError, true);
      assert.match(textOf(denied), /outside the allowed directories/);
    } finally {
      await browser.close();
      await Deno.remove(extra, { recursive: true });
    }
  },
});
