// Issue 36 (URL-mode elicitation in platform-auth), as an attacker holding
// one agent's token. A secret page is for the person: whoever holds its
// address can open it first and fill it in, and an agent's own MCP client
// is given that address (in the elicitation, or in the result when it
// cannot elicit). So an agent's call opens no secret page: `authenticate`
// (allowed for the agent here) would otherwise let the agent put a key of
// its choosing in the vault for everyone. And a page the operator's call opened belongs to the
// first browser: another client holding its address takes nothing.
// platform-auth behind the daemon's real app (tests/tools/platform-auth/
// elicitation_harness.ts), the agent's client in-process.

import assert from "node:assert/strict";
import { PAGE_PATH } from "../../tools/platform-auth/browser_pages.ts";
import {
  Browser,
  type Daemon,
  keyProbe,
  startDaemon,
} from "../tools/platform-auth/elicitation_harness.ts";

const PAGE = new RegExp(`${PAGE_PATH}\\?id=[0-9a-f]{64}`);

/** Adds an api_key platform as the operator, with a stored key its probe refuses. */
async function stalePlatform(
  daemon: Daemon,
  platform: string,
  config: Record<string, unknown>,
): Promise<void> {
  const operator = await daemon.client("none");
  const added = await operator.call("add_platform", {
    platform,
    config: { ...config, api_key: "operator-stale-key-0123456789" },
  });
  assert.equal(added.isError, false, added.text);
}

Deno.test("security elicitation: an agent's call opens no secret page, so the agent cannot enter a key of its choosing", async () => {
  // The key the probe takes: one the attacker holds (its own account at the provider).
  const attackers = "wk-attacker-" + crypto.randomUUID();
  const probe = keyProbe(attackers);
  // authenticate touches credentials, so an agent's call waits for a person
  // (tests/security/capabilities_test.ts); here the operator lets alice
  // through, and still no secret page opens for her.
  const daemon = await startDaemon({
    policy: {
      rules: [{
        id: "alice-signs-in",
        agent: "alice",
        capability: "credentials",
        decision: "allow",
      }],
    },
  });
  try {
    await stalePlatform(daemon, "weather", probe.config);
    const browser = new Browser();
    /** As the agent: the page's address wherever it came, opened and filled in with the attacker's key. */
    const fillIn = async (url: string) => {
      const page = await browser.open(url);
      await browser.post(url, { token: page.token, secret: attackers });
    };
    const answers: string[] = [];
    for (const elicits of ["none", "form", "url"] as const) {
      const alice = await daemon.client(elicits, { agent: "alice" });
      const calling = alice.call("authenticate", { platform: "weather" });
      // A client that elicits is sent the address while the call waits; alice's accepts.
      const asked = await Promise.race([
        alice.nextAsk(),
        calling.then(() => undefined),
      ]);
      if (asked) await fillIn(asked.url);
      const answer = await calling;
      const text = `${answer.text} ${JSON.stringify(answer.data)}`;
      for (
        const url
          of text.match(new RegExp(`http://[^ "]*${PAGE.source}`, "g")) ?? []
      ) {
        await fillIn(url);
      }
      answers.push(text);
      assert.deepEqual(alice.asked, [], "nothing elicited from the agent");
    }
    // The vault still holds the operator's key; the attacker's is nowhere.
    const operator = await daemon.client("none");
    const status = await operator.call("get_auth_status", {
      platform: "weather",
    });
    assert.notEqual(status.data.status, "active", status.text);
    const token = await operator.call("get_token", { platform: "weather" });
    assert.notEqual(token.data.access_token, attackers);
    // No address in any answer; the refusal says who enters it.
    for (const answer of answers) {
      assert.doesNotMatch(answer, PAGE);
      assert.match(answer, /entered by the operator/);
    }

    // The operator's own call still gets its page (the person enters the key there).
    const own = await operator.call("authenticate", { platform: "weather" });
    assert.match(own.text, PAGE);
  } finally {
    await daemon.close();
    await probe.close();
  }
});

Deno.test("security elicitation: the operator's page belongs to the first browser; another client holding its address takes nothing", async () => {
  const key = "wk-" + crypto.randomUUID();
  const probe = keyProbe(key);
  const daemon = await startDaemon();
  try {
    const operator = await daemon.client("form");
    const added = await operator.call("add_platform", {
      platform: "weather",
      config: probe.config,
    });
    const url = String(added.data.enter_secret_at);
    assert.match(url, PAGE);
    const person = new Browser();
    const page = await person.open(url);
    assert.equal(page.status, 200);

    // An agent's HTTP client that learnt the address (it forges any header but the cookie).
    const other = new Browser();
    const opened = await other.open(url);
    assert.equal(opened.status, 409);
    assert.doesNotMatch(opened.html, new RegExp(page.token));
    const posts: Record<string, string>[] = [
      { token: page.token, secret: key },
      { token: "", secret: key },
      { token: page.token, action: "cancel" },
    ];
    for (const fields of posts) {
      const posted = await other.post(url, fields);
      assert.equal(posted.status, 403, posted.html);
    }
    // The person's own browser, from another origin: refused too.
    const crossOrigin = await person.post(url, {
      token: page.token,
      secret: key,
    }, { origin: "http://evil.example" });
    assert.equal(crossOrigin.status, 403);
    // Nothing of it was saved, and the page is still the person's.
    const before = await operator.call("get_auth_status", {
      platform: "weather",
    });
    assert.equal(before.data.status, "not_authenticated");
    const saved = await person.post(url, { token: page.token, secret: key });
    assert.equal(saved.status, 200, saved.html);
  } finally {
    await daemon.close();
    await probe.close();
  }
});
