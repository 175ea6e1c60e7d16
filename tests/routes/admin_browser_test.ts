// The /admin page in real headless Chromium over a real socket: the DOM
// contract, escaping as the browser sees it, the styles and refresh script
// running under the page's CSP, and a screenshot in artifacts/.

import assert from "node:assert/strict";
import { browserTestIgnore, launchChromium, saveArtifact } from "../browser.ts";
import { adminApp, adminView, HOSTILE_ERROR } from "./admin_fixture.ts";

// Page-side globals used inside `evaluate`; Deno's lib has no DOM types.
declare const getComputedStyle: (element: unknown) => { color: string };
declare const document: {
  querySelectorAll(selector: string): Iterable<PageElement>;
};
interface PageElement {
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageElement | null;
  readonly textContent: string | null;
}

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

interface ServerRow {
  name: string | null;
  state: string | null;
  cell: string | undefined;
  color: string;
  error: string | undefined;
}

Deno.test({
  name:
    "admin page: rows, escaping, CSP-allowed styles and refresh in Chromium",
  ignore: browserTestIgnore,
  async fn() {
    let view = adminView();
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      adminApp(() => Promise.resolve(view), { refreshMs: 200 }).fetch,
    );
    let pid: number | undefined;
    try {
      await using browser = await launchChromium();
      pid = browser.process()?.pid;
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(message.text());
      });
      page.on("pageerror", (error) => problems.push(String(error)));
      page.on("dialog", (dialog) => {
        problems.push(`dialog: ${dialog.message()}`);
        void dialog.dismiss();
      });
      await page.setViewport({ width: 1280, height: 800 });
      const response = await page.goto(
        `http://127.0.0.1:${server.addr.port}/admin`,
        { waitUntil: "load" },
      );
      assert.equal(response?.status(), 200);

      // Found and read in one page task: `$$eval` finds the rows in one task
      // and reads them in another, and a refresh in between detaches them (a
      // detached cell has no computed colour).
      const servers: ServerRow[] = await page.evaluate(() =>
        [...document.querySelectorAll("#servers tr[data-server]")].map(
          (row) => {
            const state = row.querySelector("td.state");
            return {
              name: row.getAttribute("data-server"),
              state: row.getAttribute("data-state"),
              cell: state?.textContent ?? undefined,
              color: state ? getComputedStyle(state).color : "",
              error: row.querySelector("td.error")?.textContent ?? undefined,
            };
          },
        )
      );
      assert.deepEqual(
        servers.map(({ name, state, cell }) => ({ name, state, cell })),
        adminView().servers.map(({ name, state }) => ({
          name,
          state,
          cell: state,
        })),
      );
      const everything = servers.find((row) => row.name === "everything");
      // The error arrives as text: no element was made of it.
      assert.equal(everything?.error, HOSTILE_ERROR);
      assert.equal(
        await page.evaluate(() =>
          [...document.querySelectorAll("td.error *")].length
        ),
        0,
      );
      // The nonce'd stylesheet applied: unhealthy is red, healthy green.
      assert.equal(everything?.color, "rgb(220, 38, 38)");
      assert.equal(
        servers.find((row) => row.name === "memory")?.color,
        "rgb(21, 128, 61)",
      );

      const tools = await page.evaluate(() =>
        [...document.querySelectorAll("#tools tr[data-tool]")].map((row) => ({
          name: row.getAttribute("data-tool"),
          shortened: row.querySelector(".shortened") !== null,
        }))
      );
      assert.deepEqual(
        tools,
        adminView().tools.map(({ name, shortened }) => ({ name, shortened })),
      );

      const screenshot = await page.screenshot({ fullPage: true });
      const path = await saveArtifact("admin.png", screenshot);
      const saved = await Deno.readFile(path);
      assert.deepEqual([...saved.subarray(0, 8)], PNG_MAGIC);
      const ihdr = new DataView(saved.buffer, saved.byteOffset + 16, 8);
      assert.equal(ihdr.getUint32(0), 1280, "PNG width is the viewport's");
      assert.ok(ihdr.getUint32(4) >= 300, `PNG height ${ihdr.getUint32(4)}`);
      assert.ok(
        saved.length > 10_000 && saved.length < 5_000_000,
        `PNG of ${saved.length} bytes`,
      );

      // The refresh script runs under the CSP and keeps the DOM contract.
      view = adminView();
      view.servers[1] = {
        ...view.servers[1],
        state: "healthy",
        last_error: null,
      };
      await page.waitForSelector(
        '#servers tr[data-server="everything"][data-state="healthy"] td.state',
        { timeout: 5_000 },
      );
      assert.equal(
        await page.$eval(
          '#servers tr[data-server="everything"] td.error',
          (cell) => cell.textContent,
        ),
        "",
      );
      assert.equal(
        await page.$$eval("#tools tr[data-tool]", (r) => r.length),
        3,
      );
      assert.deepEqual(problems, []);
    } finally {
      await server.shutdown();
    }
    assert.ok(pid, "Chromium ran as a child process");
    assert.ok(
      await Deno.stat(`/proc/${pid}`).then(() => false, () => true),
      `Chromium (pid ${pid}) still runs after close`,
    );
  },
});
