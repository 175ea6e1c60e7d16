// register_server with credentials: a protected upstream (401 without its
// token and key) is reachable once registered with them; they are sealed in
// the store, survive a restart, and never appear in a listing, /admin or a log.

import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnDaemon, tempDir } from "../../helpers.ts";
import {
  openCredentials,
  sealCredentials,
} from "../../../tools/gateway/credentials.ts";
import {
  call,
  callJson,
  gatewayClient,
  startRecordingServer,
  textOf,
} from "./upstreams.ts";

const TOKEN = "upstream-token-7f3a9c0d2e41";
const API_KEY = "api-key-5b8e1d6f0a92";

/** Every file under `dir`, read as text, joined. */
async function everyFile(dir: string): Promise<string> {
  const texts: string[] = [];
  for await (const path of walkFiles(dir)) {
    const bytes = await Deno.readFile(path);
    texts.push(new TextDecoder("latin1").decode(bytes));
  }
  return texts.join("\n");
}

async function* walkFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* walkFiles(path);
    else if (entry.isFile) yield path;
  }
}

Deno.test("gateway: register_server with a token and headers reaches a protected upstream; they are sealed and never shown", async () => {
  await using dir = await tempDir();
  await using recorder = startRecordingServer({
    require: { authorization: `Bearer ${TOKEN}`, "x-api-key": API_KEY },
  });
  const data = join(dir.path, "data");
  const gateway = () =>
    spawnDaemon(["mcp", "gateway", "--port", "0", "--data-dir", data]);
  const logs: unknown[] = [];
  let daemon = await gateway();
  try {
    await using client = await gatewayClient(daemon.url);
    // Without credentials the upstream refuses, and nothing is registered.
    const bare = await call(client, "register_server", {
      name: "secure",
      url: recorder.url,
    });
    assert.equal(bare.isError, true);
    assert.match(textOf(bare), /401|Unauthorized/i);
    assert.ok(recorder.refused > 0);

    // Bad credential input: a clear error naming the field, nothing stored.
    for (
      const [args, message] of [
        [
          { headers: { "Content-Type": "text/plain" } },
          /headers\.Content-Type/,
        ],
        [
          { token: TOKEN, headers: { Authorization: "Basic eA==" } },
          /either token or headers\.Authorization/,
        ],
        [{ headers: { "bad name": "x" } }, /headers/],
        [{ headers: { "x-api-key": "a\r\nb" } }, /headers/],
        [{ token: "two words" }, /token/],
      ] as const
    ) {
      const refused = await call(client, "register_server", {
        name: "secure",
        url: recorder.url,
        ...args,
      });
      assert.equal(refused.isError, true, JSON.stringify(args));
      assert.match(textOf(refused), message);
    }
    const withUser = await call(client, "register_server", {
      name: "secure",
      url: recorder.url.replace("http://", `http://me:${TOKEN}@`),
    });
    assert.equal(withUser.isError, true);
    assert.match(textOf(withUser), /user name or password/);
    assert.ok(!textOf(withUser).includes(TOKEN));
    assert.equal((await callJson(client, "list_servers")).count, 0);

    const registered = await callJson(client, "register_server", {
      name: "secure",
      url: recorder.url,
      token: TOKEN,
      headers: { "X-Api-Key": API_KEY },
    });
    assert.equal(
      (registered.registered as { credentials: boolean }).credentials,
      true,
    );
    assert.equal(
      textOf(await call(client, "secure__whoami")),
      `Bearer ${TOKEN}`,
    );

    // Shown only as "credentials set", wherever the server is described.
    const shown = [
      JSON.stringify(registered),
      JSON.stringify(await callJson(client, "list_servers")),
      JSON.stringify(
        await callJson(client, "get_server_health", { name: "secure" }),
      ),
      JSON.stringify(
        await callJson(client, "get_server_tools", { name: "secure" }),
      ),
      await (await fetch(`${daemon.url}/admin?format=json`)).text(),
      await (await fetch(`${daemon.url}/admin`)).text(),
    ];
    for (const text of shown) {
      assert.ok(!text.includes(TOKEN) && !text.includes(API_KEY), text);
    }
    assert.match(shown[1], /"credentials":true/);
    assert.match(shown[5], /<span class="flag credentials">/);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
    logs.push(...daemon.logs);
  }

  // Sealed at rest: neither value is anywhere in the data directory.
  const stored = await everyFile(data);
  assert.ok(!stored.includes(TOKEN), "token stored in clear");
  assert.ok(!stored.includes(API_KEY), "header stored in clear");

  // A restart opens them again: the upstream is reached with them.
  daemon = await gateway();
  try {
    await using client = await gatewayClient(daemon.url);
    assert.equal(
      textOf(await call(client, "secure__whoami")),
      `Bearer ${TOKEN}`,
    );
  } finally {
    assert.equal((await daemon.stop()).code, 0);
    logs.push(...daemon.logs);
  }
  const logged = JSON.stringify(logs);
  assert.ok(logged.includes('"registered"'), "the registration was logged");
  assert.ok(!logged.includes(TOKEN) && !logged.includes(API_KEY));
});

Deno.test("credentials: a sealed value opens only under its own name and key", async () => {
  const key = await crypto.subtle.generateKey(
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
  const other = await crypto.subtle.generateKey(
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
  const headers = { Authorization: `Bearer ${TOKEN}` };
  const sealed = await sealCredentials(key, "secure", headers);
  assert.ok(!sealed.includes(TOKEN));
  assert.deepEqual(await openCredentials(key, "secure", sealed), headers);
  await assert.rejects(() => openCredentials(key, "other", sealed));
  await assert.rejects(() => openCredentials(other, "secure", sealed));
});
