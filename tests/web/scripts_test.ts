// The pages' browser scripts: web/src/ type-checks with the DOM library (the
// daemon's own check does not reach it: nothing the daemon runs imports it),
// and web/scripts.ts, which the daemon serves, is the bundle of web/src as it
// is now (run `deno task build:web` after changing web/src).

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { renderScripts, SCRIPTS_FILE } from "../../web/build.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

Deno.test("web: web/src type-checks with the DOM library", async () => {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["check", "web/src/"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(code, 0, decoder.decode(stdout) + decoder.decode(stderr));
});

Deno.test("web: web/scripts.ts is the bundle of web/src as it is now", async () => {
  assert.equal(
    await Deno.readTextFile(SCRIPTS_FILE),
    await renderScripts(),
    "web/scripts.ts is stale: run `deno task build:web`",
  );
});
