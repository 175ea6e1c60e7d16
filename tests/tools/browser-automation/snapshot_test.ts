// `snapshot` on a page of more than 500 KB of DOM in real Chromium: the
// answer stays under max_tokens with the cut stated, a ref clicks the right
// one of two look-alike buttons, the diff after the click shows the change,
// iframes are included, a subtree comes alone, and after a navigation the old
// ref is refused.

import assert from "node:assert/strict";
import { browserTestIgnore } from "../../browser.ts";
import { startHarness, textOf } from "./harness.ts";
import { startSnapshotSite } from "./snapshot_site.ts";

function refOf(text: string, line: RegExp): string {
  const found = text.split("\n").find((each) => line.test(each));
  assert.ok(found, `no line matching ${line} in:\n${text.slice(0, 2000)}`);
  const ref = found.match(/\[ref=(s\d+e\d+)\]/)?.[1];
  assert.ok(ref, found);
  return ref;
}

Deno.test({
  name:
    "browser automation: snapshot on a budget, refs, diff, iframes, stale refs",
  ignore: browserTestIgnore,
  async fn() {
    await using site = startSnapshotSite();
    assert.ok(site.bigBytes >= 500_000, `${site.bigBytes} bytes`);
    const browser = await startHarness();
    const { call, ok } = browser;
    try {
      await ok("navigate", { url: `${site.url}/big` });
      const maxTokens = 3000;
      const first = await call("snapshot", { max_tokens: maxTokens });
      assert.ok(!first.isError, textOf(first));
      const text = textOf(first);
      assert.ok(
        text.length / 4 <= maxTokens,
        `${text.length} characters for ${maxTokens} tokens`,
      );
      assert.match(text, /\[cut at max_tokens=3000: \d+ of \d+ lines shown/);
      assert.equal(first.structuredContent?.cut, true);
      assert.match(text, /button "Inside frame"/, "the iframe's content");
      const go = refOf(text, /button "Press me" /);
      refOf(text, /button "Press me too"/);

      // The ref clicks the right button, not its look-alike.
      await ok("click_element", { selector: `ref=${go}` });
      const status = await call("get_text", { selector: "#status" });
      assert.equal(textOf(status), "Clicked!");

      const diff = textOf(await call("snapshot", { diff: true }));
      assert.match(diff, /^\+ .*"Clicked!"/m);
      assert.match(diff, /^- .*"Waiting"/m);
      assert.ok(!/Item 100\b/.test(diff), "unchanged lines are left out");

      // Refs of an older snapshot are refused; the latest one's work.
      const stale = await call("click_element", { selector: `ref=${go}` });
      assert.equal(stale.isError, true);
      assert.match(
        textOf(stale),
        /stale: it is from snapshot 1, the latest is 2/,
      );

      // A subtree, by selector and by ref; type_text takes a ref too.
      const panel = textOf(await call("snapshot", { selector: "#panel" }));
      assert.match(panel, /button "Panel action"/);
      assert.doesNotMatch(panel, /Item 1\b|Press me/);
      const full = textOf(await call("snapshot", { max_tokens: 2000 }));
      const name = refOf(full, /textbox "Your name"/);
      await ok("type_text", { selector: name, text: "Ada" });
      assert.equal(
        await browser.client.callTool({
          name: "execute_js",
          arguments: { script: "return document.getElementById('name').value" },
        }).then((result) => JSON.stringify(result.content)).then((value) =>
          /Ada/.test(value)
        ),
        true,
      );
      const away = refOf(full, /link "Go elsewhere"/);

      // After a navigation, the old ref is refused with the reason.
      await ok("click_element", { selector: `ref=${away}` });
      const refused = await call("click_element", { selector: `ref=${away}` });
      assert.equal(refused.isError, true);
      assert.match(
        textOf(refused),
        /Ref s\d+e\d+ is stale: the page navigated to .*\/other after snapshot \d+; take a new snapshot/,
      );
      const none = await call("click_element", { selector: "ref=s99e1" });
      assert.equal(none.isError, true);
    } finally {
      await browser.close();
    }
  },
});
