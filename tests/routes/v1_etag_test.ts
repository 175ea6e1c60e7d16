// GET /v1/agents and /v1/teams answer from the in-process view with an ETag
// per view version: If-None-Match with it gets 304 and no body until a
// create or delete changes the list; pages from the store carry none.

import assert from "node:assert/strict";
import { startStack } from "../agents/stack.ts";

for (const kind of ["agents", "teams"] as const) {
  Deno.test(`v1 ${kind}: the full list has an ETag; If-None-Match gets 304 until the list changes`, async () => {
    await using stack = await startStack({ noServers: true });
    const path = `/v1/${kind}`;
    const create = (name: string) =>
      stack.request(
        "POST",
        path,
        kind === "agents" ? { name } : { name, agents: ["m"] },
      );
    if (kind === "teams") {
      assert.equal(
        (await stack.request("POST", "/v1/agents", { name: "m" })).status,
        201,
      );
    }
    const made = await create("one");
    assert.equal(made.status, 201, made.text);

    const first = await stack.request("GET", path);
    assert.equal(first.status, 200);
    const tag = first.headers.get("etag");
    assert.ok(tag !== null && /^"[^"]+"$/.test(tag), `ETag ${tag}`);
    assert.equal((await stack.request("GET", path)).headers.get("etag"), tag);

    for (const header of [tag, `W/${tag}`, `"other", ${tag}`, "*"]) {
      const again = await stack.request("GET", path, undefined, {
        "if-none-match": header,
      });
      assert.equal(again.status, 304, header);
      assert.equal(again.text, "");
      assert.equal(again.headers.get("etag"), tag);
    }
    const other = await stack.request("GET", path, undefined, {
      "if-none-match": '"other"',
    });
    assert.equal(other.status, 200);
    assert.equal(other.text, first.text);

    // A create changes the list: the old tag no longer matches.
    assert.equal((await create("two")).status, 201);
    const changed = await stack.request("GET", path, undefined, {
      "if-none-match": tag,
    });
    assert.equal(changed.status, 200);
    assert.notEqual(changed.headers.get("etag"), tag);
    assert.notEqual(changed.text, first.text);

    // A page smaller than the list comes from the store, with no tag.
    const paged = await stack.request("GET", `${path}?limit=1`);
    assert.equal(paged.status, 200);
    assert.equal(paged.headers.get("etag"), null);
  });
}
