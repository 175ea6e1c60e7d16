// lazy_modules.ts names every module imported on first use, and the compile
// task passes exactly those to --include: `deno compile` embeds only the
// modules it can see, so one missing there fails the binary the first time
// its path is taken. These tests read the product code's lazy() and
// lazyModule() calls and hold them against the table.

import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { LAZY_MODULE_PATHS } from "../../lazy_modules.ts";
import { compileArgs } from "../../compile.ts";
import { lazyModule } from "../../platform/lazy.ts";
import { ROOT } from "../helpers.ts";

// Not product code, or not loaded by agentd's own module graph.
const SKIPPED = new Set([
  "node_modules",
  "tests",
  "bench",
  "extension",
  "docs",
]);

async function* sources(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    if (SKIPPED.has(entry.name) || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* sources(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

interface Site {
  /** The file and the module it names, both from the repository root. */
  file: string;
  target: string;
  /** The module its `typeof import(...)` names, when it has one. */
  typed?: string;
}

// `lazy<typeof import("x")>(\n  "x", import.meta.url)`, `lazy("x", …)`, and
// the same with lazyModule.
const CALL =
  /\blazy(?:Module)?(?:<\s*typeof import\("([^"]+)"\)\s*>|<[^>]*>)?\(\s*"([^"]+)"\s*,\s*import\.meta\.url/g;
const ANY_CALL = /\blazy(?:Module)?(?:<[^>]*>)?\(/g;
const IMPORT_STRING = /\bimport\("([^"]+)"\)/g;
const LITERAL_DYNAMIC_IMPORT = /(?<!typeof\s+)\bimport\(\s*["'`]/g;

/** The text with comment lines blanked (they name lazy() in prose). */
function withoutComments(text: string): string {
  return text.split("\n").map((line) =>
    /^\s*(\/\/|\/\*|\*)/.test(line) ? "" : line
  ).join("\n");
}

interface Scan {
  sites: Site[];
  /** Every `import("x")` string (types included), as file and target. */
  imports: Site[];
  /** Calls whose path is not a literal beside import.meta.url. */
  unread: string[];
  literalImports: string[];
}

async function scan(): Promise<Scan> {
  const result: Scan = {
    sites: [],
    imports: [],
    unread: [],
    literalImports: [],
  };
  const fromRoot = (file: string, specifier: string) =>
    relative(ROOT, join(dirname(file), specifier));
  for await (const path of sources(ROOT)) {
    const file = relative(ROOT, path);
    // The mechanism itself: its calls take a computed URL.
    if (file === join("platform", "lazy.ts")) continue;
    const text = withoutComments(await Deno.readTextFile(path));
    let read = 0;
    for (const match of text.matchAll(CALL)) {
      read++;
      result.sites.push({
        file,
        target: fromRoot(path, match[2]),
        typed: match[1] === undefined ? undefined : fromRoot(path, match[1]),
      });
    }
    const calls = [...text.matchAll(ANY_CALL)].length;
    if (calls !== read) result.unread.push(`${file}: ${calls - read}`);
    for (const match of text.matchAll(IMPORT_STRING)) {
      result.imports.push({ file, target: fromRoot(path, match[1]) });
    }
    if (LITERAL_DYNAMIC_IMPORT.test(text)) result.literalImports.push(file);
    LITERAL_DYNAMIC_IMPORT.lastIndex = 0;
  }
  return result;
}

Deno.test("lazy_modules.ts names each module some lazy() or lazyModule() call loads, once, and no other", async () => {
  const { sites, unread } = await scan();
  assert.deepEqual(unread, [], "every call names its module by a literal path");
  assert.ok(sites.length >= 30, `only ${sites.length} lazy calls found`);
  const table = new Set(LAZY_MODULE_PATHS);
  assert.equal(table.size, LAZY_MODULE_PATHS.length, "a path listed twice");
  const loaded = new Set(sites.map((site) => site.target));
  const missing = [...loaded].filter((path) => !table.has(path)).sort();
  assert.deepEqual(
    missing,
    [],
    `add to lazy_modules.ts: ${missing.join(", ")}`,
  );
  const stale = [...table].filter((path) => !loaded.has(path)).sort();
  assert.deepEqual(stale, [], `nothing loads, remove: ${stale.join(", ")}`);
  for (const path of table) {
    assert.ok(
      (await Deno.stat(join(ROOT, path))).isFile,
      `${path} is a file`,
    );
  }
});

Deno.test("a lazy call's typeof import names the module it loads", async () => {
  const { sites } = await scan();
  const typed = sites.filter((site) => site.typed !== undefined);
  assert.ok(typed.length >= 25, `only ${typed.length} typed calls found`);
  const mismatched = typed.filter((site) => site.typed !== site.target)
    .map((site) => `${site.file}: ${site.typed} vs ${site.target}`);
  assert.deepEqual(mismatched, []);
});

// A literal import() makes Deno read that module's whole graph when the
// importing module loads (platform/lazy.ts): it would undo the cold start.
Deno.test("product code imports on first use only through lazy(), and types by import() only what it so loads", async () => {
  const { imports, literalImports } = await scan();
  assert.deepEqual(literalImports, []);
  const table = new Set(LAZY_MODULE_PATHS);
  const strays = imports.filter((site) => !table.has(site.target))
    .map((site) => `${site.file}: ${site.target}`);
  assert.deepEqual(
    strays,
    [],
    "use `import type` for a module loaded at start",
  );
});

Deno.test("compile: deno compile gets exactly the table's modules with --include", () => {
  const args = compileArgs([]);
  const included = args.flatMap((arg, i) =>
    args[i - 1] === "--include" ? [arg] : []
  );
  assert.deepEqual(included, [...LAZY_MODULE_PATHS]);
  assert.equal(args[0], "compile");
  assert.equal(args.at(-1), "main.ts");
  assert.deepEqual(args.slice(-3), ["--output", "dist/agentd", "main.ts"]);
  const targeted = compileArgs([
    "--target",
    "x86_64-pc-windows-msvc",
    "--output",
    "dist/a.exe",
  ]);
  assert.equal(targeted.filter((arg) => arg === "--output").length, 1);
  assert.deepEqual(targeted.slice(-5), [
    "--target",
    "x86_64-pc-windows-msvc",
    "--output",
    "dist/a.exe",
    "main.ts",
  ]);
});

Deno.test("compile: the task and the release workflow build through compile.ts", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  assert.match(
    String(config.tasks.compile),
    /^deno run --allow-all compile\.ts$/,
  );
  const workflow = await Deno.readTextFile(
    join(ROOT, ".github", "workflows", "release.yml"),
  );
  assert.match(
    workflow,
    /deno task compile --target \$\{\{ matrix\.target \}\}/,
  );
  assert.doesNotMatch(workflow, /deno compile /);
});

Deno.test("lazyModule(): its path is from the repository root, and it refuses one outside", () => {
  const module = lazyModule<typeof import("../helpers.ts")>(
    "../helpers.ts",
    import.meta.url,
  );
  assert.equal(module.path, "tests/helpers.ts");
  assert.throws(
    () => lazyModule("../../../elsewhere.ts", import.meta.url),
    /outside the repository/,
  );
});
