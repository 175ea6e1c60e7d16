// The shared small helpers: isRecord, describeIssues (zod issues as one
// line naming each field) and publicUrl (no secrets in logs).

import assert from "node:assert/strict";
import { z } from "zod";
import { describeIssues, isRecord } from "../../platform/validation.ts";
import { publicUrl } from "../../platform/log.ts";

Deno.test("isRecord: plain objects only", () => {
  assert.equal(isRecord({ a: 1 }), true);
  assert.equal(isRecord({}), true);
  assert.equal(isRecord(null), false);
  assert.equal(isRecord([1]), false);
  assert.equal(isRecord("x"), false);
  assert.equal(isRecord(undefined), false);
});

Deno.test("describeIssues: names each field, the root when asked, at most max issues", () => {
  const schema = z.object({
    id: z.string(),
    message: z.object({ parts: z.array(z.string()).min(1) }),
  });
  const nested = schema.safeParse({ message: { parts: [] } });
  assert.ok(!nested.success);
  const line = describeIssues(nested.error);
  assert.match(line, /^id: .+; message\.parts: .+$/);
  assert.equal(describeIssues(nested.error, { max: 1 }).split("; ").length, 1);

  const root = schema.safeParse("not an object");
  assert.ok(!root.success);
  assert.doesNotMatch(describeIssues(root.error), /^card: /);
  assert.match(describeIssues(root.error, { root: "card" }), /^card: /);
});

Deno.test("publicUrl: drops password, query and fragment, keeps user and path", () => {
  assert.equal(
    publicUrl("postgres://agentd:s3cret@127.0.0.1:5432/db?sslmode=require#x"),
    "postgres://agentd@127.0.0.1:5432/db",
  );
  assert.equal(
    publicUrl("https://api.deno.com/databases/abc/connect?token=t0k3n"),
    "https://api.deno.com/databases/abc/connect",
  );
  assert.equal(publicUrl(new URL("http://h/p")), "http://h/p");
  assert.equal(publicUrl("not a url"), "(invalid URL)");
});
