// The house rules that `deno test` does not enforce by itself: `deno lint`
// and `deno fmt --check` are clean on the whole repository (CI runs only the
// test command, so a lint slip would otherwise land unseen).

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

async function run(args: string[]): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return { code, output: decoder.decode(stdout) + decoder.decode(stderr) };
}

Deno.test("source: deno lint is clean", async () => {
  const { code, output } = await run(["lint"]);
  assert.equal(code, 0, output);
});

Deno.test("source: deno fmt --check is clean", async () => {
  const { code, output } = await run(["fmt", "--check"]);
  assert.equal(code, 0, output);
});
