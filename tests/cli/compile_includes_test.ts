// `deno compile` only embeds modules it can see: every module that
// platform/lazy.ts imports by a computed path must be in the compile task's
// --include list, or the binary fails the first time that path is taken.

import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sources(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

/** Repository-relative paths of every `lazy(...)` target in product code. */
async function lazyTargets(): Promise<Set<string>> {
  const targets = new Set<string>();
  const files = [join(ROOT, "main.ts")];
  for (const dir of ["cli", "tools", "platform", "agents", "routes", "ffi"]) {
    for await (const file of sources(join(ROOT, dir))) files.push(file);
  }
  // `lazy<typeof import("x")>(\n  "x", import.meta.url)` or `lazy("x", ...)`.
  const call = /\blazy(?:<[^>]*>)?\(\s*"([^"]+)"/gs;
  for (const file of files) {
    if (file.endsWith(join("platform", "lazy.ts"))) continue;
    const text = await Deno.readTextFile(file);
    for (const match of text.matchAll(call)) {
      targets.add(relative(ROOT, join(dirname(file), match[1])));
    }
  }
  return targets;
}

Deno.test("compile: every module loaded by a computed path is in the compile task's --include list", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const task = String(config.tasks.compile);
  const included = new Set(
    [...task.matchAll(/--include\s+(\S+)/g)].map((match) => match[1]),
  );
  const targets = await lazyTargets();
  assert.ok(targets.size >= 15, `only ${targets.size} lazy targets found`);
  const missing = [...targets].filter((path) => !included.has(path)).sort();
  assert.deepEqual(missing, [], `add --include for: ${missing.join(", ")}`);
});

Deno.test("compile: the release workflow builds with the compile task's flags", async () => {
  const workflow = await Deno.readTextFile(
    join(ROOT, ".github", "workflows", "release.yml"),
  );
  assert.match(workflow, /tasks\.compile/);
  assert.match(workflow, /deno compile \$flags --target/);
});
