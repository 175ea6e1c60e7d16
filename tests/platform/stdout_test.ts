// platform/stdout.ts: which stdout is reopened blocking, read from stand-in
// /proc files (the process test is tests/tools/stdio_slow_reader_test.ts).

import assert from "node:assert/strict";
import { join } from "node:path";
import { blockingStdout } from "../../platform/stdout.ts";
import { tempDir } from "../helpers.ts";

const NONBLOCKING = "pos:\t0\nflags:\t04001\nmnt_id:\t15\n";
const BLOCKING = "pos:\t0\nflags:\t01\nmnt_id:\t15\n";

Deno.test("stdout: a non-blocking pipe is reopened blocking; a blocking one, a file or no /proc are left alone", async () => {
  await using dir = await tempDir();
  const fdinfo = join(dir.path, "fdinfo");
  const fifo = join(dir.path, "fifo");
  const file = join(dir.path, "file");
  const mkfifo = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(mkfifo.success);
  await Deno.writeTextFile(file, "");
  // A reader on the FIFO, so opening it for writing does not wait.
  using reader = await Deno.open(fifo, { read: true, write: true });
  assert.ok(reader);

  await Deno.writeTextFile(fdinfo, NONBLOCKING);
  const reopened = blockingStdout({ fdinfo, fd: fifo });
  assert.ok(reopened.file, JSON.stringify(reopened));
  reopened.file.close();
  assert.deepEqual(blockingStdout({ fdinfo, fd: file }), {});
  assert.match(
    blockingStdout({ fdinfo, fd: join(dir.path, "gone") }).problem ?? "",
    /could not reopen it blocking/,
  );

  await Deno.writeTextFile(fdinfo, BLOCKING);
  assert.deepEqual(blockingStdout({ fdinfo, fd: fifo }), {});
  assert.deepEqual(
    blockingStdout({ fdinfo: join(dir.path, "none"), fd: fifo }),
    {},
  );
});
