// register_server's link-local rule: literal addresses in every spelling the
// URL parser leaves, names by what they resolve to, loopback untouched.

import assert from "node:assert/strict";
import {
  isLinkLocal,
  linkLocalTarget,
} from "../../../tools/gateway/link_local.ts";

Deno.test("link-local: addresses in the URL parser's spellings", async () => {
  for (
    const url of [
      "http://169.254.169.254/latest",
      "http://2852039166/", // 169.254.169.254 as one number
      "http://0xa9.0xfe.0xa9.0xfe/",
      "http://[::ffff:169.254.169.254]/",
      "http://[fe80::1]:8080/mcp",
      "http://[FEBF::1]/",
    ]
  ) {
    assert.ok(
      await linkLocalTarget(new URL(url), {
        timeoutMs: 1000,
        resolve: () => Promise.resolve([]),
      }),
      url,
    );
  }
  for (
    const url of [
      "http://127.0.0.1:3001/mcp",
      "http://[::1]/",
      "http://10.0.0.1/",
      "http://[fec0::1]/",
      "http://[fe8::1]/",
    ]
  ) {
    assert.equal(
      await linkLocalTarget(new URL(url), {
        timeoutMs: 1000,
        resolve: () => Promise.resolve([]),
      }),
      undefined,
      url,
    );
  }
  assert.equal(isLinkLocal("169.255.0.1"), false);
});

Deno.test("link-local: a name is judged by its DNS answers; one that does not resolve passes", async () => {
  const metadata = await linkLocalTarget(
    new URL("http://metadata.internal/"),
    {
      timeoutMs: 1000,
      resolve: () => Promise.resolve(["10.1.2.3", "169.254.169.254"]),
    },
  );
  assert.match(
    metadata ?? "",
    /resolves to the link-local address 169\.254\.169\.254/,
  );
  assert.equal(
    await linkLocalTarget(
      new URL("http://nowhere.invalid/"),
      {
        timeoutMs: 1000,
        resolve: () => Promise.reject(new Error("no such host")),
      },
    ),
    undefined,
  );
});

Deno.test("link-local: a DNS that does not answer fails the check, naming the lookup and dns_timeout_ms", async () => {
  let aborted = false;
  await assert.rejects(
    linkLocalTarget(new URL("http://slow.example/mcp"), {
      timeoutMs: 50,
      // Never answers; the lookup is cancelled once the deadline passed.
      resolve: (_host, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            reject(new Error("aborted"));
          });
        }),
    }),
    /no answer to the DNS lookup of slow\.example within 50 ms \(dns_timeout_ms\)/,
  );
  assert.ok(aborted, "the lookup was cancelled");
});
