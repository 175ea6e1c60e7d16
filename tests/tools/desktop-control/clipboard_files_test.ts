// Clipboard both ways with another X client (xclip), the file sandbox through
// the tools with its audit log, and refusal while listening off loopback.

import assert from "node:assert/strict";
import { join } from "node:path";
import { waitFor } from "../../helpers.ts";
import { startDesktop, startXvfb, textOf, xTestIgnore } from "./xvfb.ts";

Deno.test({
  name:
    "desktop: set_clipboard is read by xclip, and get_clipboard reads what xclip set",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    const x = await startXvfb();
    const desktop = await startDesktop(x.display);
    try {
      const text = "copied from agentd ✓ — ünïcode\nsecond line";
      await desktop.ok("set_clipboard", { text });
      assert.equal(
        await x.run("xclip", ["-selection", "clipboard", "-o"]),
        text,
      );
      // A second write replaces the first (and its owner process).
      await desktop.ok("set_clipboard", { text: "second" });
      assert.equal(
        await x.run("xclip", ["-selection", "clipboard", "-o"]),
        "second",
      );

      // The reverse: another client owns the clipboard, we read it.
      const other = new Deno.Command("xclip", {
        args: ["-selection", "clipboard", "-i"],
        env: { DISPLAY: x.display },
        stdin: "piped",
        stdout: "null",
        stderr: "null",
      }).spawn();
      const writer = other.stdin.getWriter();
      await writer.write(new TextEncoder().encode("from xclip → agentd"));
      await writer.close();
      await other.status;
      const read = await waitFor(
        () => desktop.ok("get_clipboard"),
        (value) => value.text === "from xclip → agentd",
      );
      assert.equal(read.chars, 19);
      // Clipboard text never reaches the logs.
      assert.ok(
        !JSON.stringify(desktop.logs).includes("agentd ✓"),
        "clipboard text is not logged",
      );
    } finally {
      await desktop.close();
      await x.close();
    }
  },
});

Deno.test({
  name:
    "desktop: files only inside allowed roots, atomic writes, audited without content",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    const x = await startXvfb();
    const root = await Deno.realPath(
      await Deno.makeTempDir({ prefix: "agentd-root-" }),
    );
    const outside = await Deno.realPath(
      await Deno.makeTempDir({ prefix: "agentd-outside-" }),
    );
    await Deno.writeTextFile(join(outside, "secret.txt"), "outside secret");
    await Deno.symlink(join(outside, "secret.txt"), join(root, "link.txt"));
    await Deno.symlink(outside, join(root, "linkdir"));
    const desktop = await startDesktop(x.display, {
      config: { allowed_roots: [root], max_write_bytes: 64 },
    });
    try {
      const written = await desktop.ok("file_write", {
        path: "notes.txt",
        content: "hello sandbox ✓",
      });
      assert.equal(written.path, join(root, "notes.txt"));
      assert.equal(written.created, true);
      assert.equal(
        await Deno.readTextFile(join(root, "notes.txt")),
        "hello sandbox ✓",
      );
      const read = await desktop.ok("file_read", {
        path: join(root, "notes.txt"),
      });
      assert.equal(read.content, "hello sandbox ✓");
      assert.equal(read.bytes, 17);

      const refused: [string, Record<string, unknown>, RegExp][] = [
        // Resolved before the policy judges them: the file named is outside.
        ["file_read", { path: "../x.txt" }, /outside the allowed roots/],
        ["file_read", { path: `${root}/../x` }, /outside the allowed roots/],
        [
          "file_read",
          { path: join(outside, "secret.txt") },
          /outside the allowed roots/,
        ],
        ["file_read", { path: "link.txt" }, /outside the allowed roots/],
        [
          "file_read",
          { path: "linkdir/secret.txt" },
          /outside the allowed roots/,
        ],
        [
          "file_write",
          { path: "/etc/agentd-test", content: "x" },
          /outside the allowed roots/,
        ],
        [
          "file_write",
          { path: "link.txt", content: "x" },
          /outside the allowed roots/,
        ],
        [
          "file_write",
          { path: "linkdir/new.txt", content: "x" },
          /outside the allowed roots/,
        ],
        [
          "file_write",
          { path: "big.txt", content: "x".repeat(65) },
          /over the 64-byte write limit/,
        ],
      ];
      for (const [tool, args, message] of refused) {
        const result = await desktop.call(tool, args);
        assert.ok(result.isError, `${tool} ${JSON.stringify(args)} refused`);
        assert.match(
          textOf(result),
          message,
          `${tool} ${JSON.stringify(args)}`,
        );
      }
      assert.equal(
        await Deno.readTextFile(join(outside, "secret.txt")),
        "outside secret",
        "nothing outside changed",
      );
      assert.deepEqual(
        [...Deno.readDirSync(outside)].map((entry) => entry.name),
        ["secret.txt"],
      );
      // A refused or failed write leaves no file and no temporary behind.
      assert.deepEqual(
        [...Deno.readDirSync(root)].map((entry) => entry.name).toSorted(),
        ["link.txt", "linkdir", "notes.txt"],
      );
      // Replacing a file: the new content, whole.
      await desktop.ok("file_write", { path: "notes.txt", content: "v2" });
      assert.equal(await Deno.readTextFile(join(root, "notes.txt")), "v2");

      const audit = desktop.logs.filter((line) => line.event === "file_audit");
      assert.equal(audit.length, 3 + refused.length);
      assert.ok(audit.every((line) => typeof line.path === "string"));
      assert.ok(
        !JSON.stringify(desktop.logs).includes("hello sandbox"),
        "file content is never logged",
      );
    } finally {
      await desktop.close();
      await x.close();
      await Deno.remove(root, { recursive: true });
      await Deno.remove(outside, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "desktop: calls are refused while listening off loopback unless allow_remote",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    const x = await startXvfb();
    const refused = await startDesktop(x.display, {
      address: () => "http://192.0.2.10:8765",
    });
    const allowed = await startDesktop(x.display, {
      address: () => "http://192.0.2.10:8765",
      config: { allow_remote: true },
    });
    try {
      const result = await refused.call("get_window_list");
      assert.ok(result.isError);
      assert.match(textOf(result), /off loopback .*allow_remote/);
      const health = await refused.host.health();
      assert.equal(health.degraded, true);
      assert.equal((health.details as { remote: string }).remote, "refused");
      await allowed.ok("get_window_list");
    } finally {
      await refused.close();
      await allowed.close();
      await x.close();
    }
  },
});
