// The layout's boundaries, checked the way playwright-mcp checks its DEPS
// lists: every product file's imports are read (static `import`/`export …
// from`, `import("…")`, `lazy("…")` and `new URL("…", import.meta.url)`) and
// each must point down the layout (ARCHITECTURE §3: main → cli → routes →
// agents → tools → platform → ffi). Within tools/, the kit's contract sits
// under every server, its transports and its policy beside it; no server
// imports another; and nothing outside a server's folder reaches inside it
// except through its mod.ts (the spec) or config.ts (its config section).
// platform/ holds what parts share: a module only one server uses lives in
// that server's folder.
//
// tests/ and bench/ are exempt: they measure and drive internals on purpose.

import assert from "node:assert/strict";
import { dirname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Product code: what ships in the binary or the extension. */
const PRODUCT = [
  "main.ts",
  "lazy_modules.ts",
  "compile.ts",
  "cli",
  "routes",
  "web",
  "agents",
  "tools",
  "platform",
  "ffi",
  "extension",
];

/** Stands for "each server's own folder" in the table below. */
const OWN = "tools/<server>/";
/**
 * Stands for a server's faces: `tools/<server>/mod.ts`, `config.ts` and its
 * generated `tool_listings.ts` (what `serve` shows of it before loading it).
 */
const FACE = "tools/<server>/{mod,config,tool_listings}.ts";

const KIT = "tools/kit/";
const TRANSPORT = "tools/kit/transport/";
const POLICY = "tools/kit/policy/";

/**
 * What each part may import, besides npm: and node: modules. A file belongs
 * to the most specific key its path starts with; a server's folder to OWN.
 */
const DEPS: Record<string, readonly string[]> = {
  // Parses flags and hands over to a command in cli/.
  // Starts the stdio front of `mcp <server>`, then loads the CLI (cli/main.ts).
  "main.ts": [
    "lazy_modules.ts",
    "cli/main.ts",
    "cli/mcp_entry.ts",
    "cli/",
    "tools/registry.ts",
    KIT,
    "platform/",
  ],
  // Every lazily loaded module, named once (main.ts and compile.ts read it).
  "lazy_modules.ts": ["cli/", "tools/registry.ts", "platform/"],
  // The compile task: deno compile with the table's modules included.
  "compile.ts": ["lazy_modules.ts", "platform/"],
  // The CLI's body: main.ts loads it after the stdio front started.
  "cli/main.ts": [
    "cli/",
    "tools/registry.ts",
    KIT,
    "platform/",
  ],
  // `mcp`'s way into the CLI: cli/main.ts with the seams its servers run, deferred.
  "cli/mcp_entry.ts": ["cli/main.ts", "platform/"],
  // The commands build the servers, the agents and the routes, and start a face.
  "cli/": [
    "cli/",
    "routes/",
    "agents/",
    "tools/registry.ts",
    KIT,
    TRANSPORT,
    POLICY,
    FACE,
    "platform/",
    "ffi/",
  ],
  // Hono sub-apps: the agents runtime, the kit's hosts and HTTP transport.
  "routes/": [
    "routes/",
    "web/",
    "agents/",
    KIT,
    TRANSPORT,
    POLICY,
    "platform/",
  ],
  // The pages (dashboard, admin, docs) and their bundled browser code.
  "web/": ["web/", KIT, "platform/"],
  // Agents reach tools only as an MCP client of the gateway (a DirectLink).
  "agents/": ["agents/", KIT, "platform/"],
  "tools/registry.ts": [FACE, KIT, "tools/icons.ts", "platform/"],
  // The built-in servers' icons, which the registry gives their specs.
  "tools/icons.ts": [KIT],
  "tools/tool_listings.ts": ["tools/registry.ts", KIT, "platform/"],
  // A server: its own folder, the kit's contract, the platform, FFI.
  [OWN]: [OWN, KIT, "platform/", "ffi/"],
  // MCP clients use the kit's client transports: the gateway (its upstreams)
  // and memory's hosted mode (another agentd).
  "tools/gateway/": [OWN, KIT, TRANSPORT, "platform/"],
  "tools/memory/": [OWN, KIT, TRANSPORT, "platform/"],
  // Every MCP transport, server and client side, on top of the contract.
  [TRANSPORT]: [TRANSPORT, KIT, "platform/"],
  // The guard and the audit judge calls the contract describes.
  [POLICY]: [POLICY, KIT, "platform/"],
  // The contract: a host runs each call through the policy guard.
  [KIT]: [KIT, POLICY, "platform/"],
  "platform/": ["platform/", "ffi/"],
  "ffi/": ["ffi/"],
  // The browser extension shares the daemon-origin rules with the daemon.
  "extension/": ["extension/", "platform/"],
};

/** The most specific DEPS key `path` (repository-relative, `/`) belongs to. */
function zoneOf(path: string): string | undefined {
  const server = serverOf(path);
  if (server !== undefined) {
    return `tools/${server}/` in DEPS ? `tools/${server}/` : OWN;
  }
  let best: string | undefined;
  for (const key of Object.keys(DEPS)) {
    if (key.includes("<")) continue;
    const hit = key.endsWith("/") ? path.startsWith(key) : path === key;
    if (hit && (best === undefined || key.length > best.length)) best = key;
  }
  return best;
}

/** The server whose folder holds `path` (tools/<server>/…, not the kit). */
function serverOf(path: string): string | undefined {
  const match = /^tools\/([^/]+)\//.exec(path);
  return match && match[1] !== "kit" ? match[1] : undefined;
}

/** Blanks comments, template-literal text and regular expressions (same length). */
function codeOnly(source: string): string {
  const out = source.split("");
  const blank = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (out[i] !== "\n") out[i] = " ";
  };
  // Open template literals: the brace depth at which each `${` started.
  const templates: number[] = [];
  let depth = 0;
  let last = ""; // the last significant code character or word
  let i = 0;
  const n = source.length;
  const templateText = () => {
    const start = i;
    while (i < n) {
      if (source[i] === "\\") i += 2;
      else if (source[i] === "`") {
        blank(start, i);
        i++;
        last = "`";
        return;
      } else if (source[i] === "$" && source[i + 1] === "{") {
        blank(start, i);
        i += 2;
        templates.push(depth);
        depth++;
        last = "{";
        return;
      } else i++;
    }
    blank(start, n);
  };
  while (i < n) {
    const c = source[i];
    if (c === "/" && source[i + 1] === "/") {
      const end = source.indexOf("\n", i);
      blank(i, end < 0 ? n : end);
      i = end < 0 ? n : end;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      blank(i, end < 0 ? n : end + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '"' || c === "'") {
      i++;
      while (i < n && source[i] !== c && source[i] !== "\n") {
        i += source[i] === "\\" ? 2 : 1;
      }
      i++;
      last = c;
    } else if (c === "`") {
      i++;
      templateText();
    } else if (c === "/" && regexMayStart(last)) {
      const start = i++;
      let inClass = false;
      while (i < n && source[i] !== "\n") {
        if (source[i] === "\\") i++;
        else if (source[i] === "[") inClass = true;
        else if (source[i] === "]") inClass = false;
        else if (source[i] === "/" && !inClass) break;
        i++;
      }
      i++;
      blank(start, i);
      last = "/";
    } else if (c === "{") {
      depth++;
      last = c;
      i++;
    } else if (c === "}") {
      depth--;
      i++;
      if (templates.length > 0 && templates.at(-1) === depth) {
        templates.pop();
        templateText();
      } else last = c;
    } else if (/[A-Za-z_$]/.test(c)) {
      const word = /^[\w$]+/.exec(source.slice(i, i + 40))?.[0] ?? c;
      last = word;
      i += word.length;
    } else {
      if (!/\s/.test(c)) last = c;
      i++;
    }
  }
  return out.join("");
}

const REGEX_AFTER_WORD = new Set([
  "return",
  "typeof",
  "case",
  "in",
  "of",
  "void",
  "delete",
  "new",
  "throw",
  "yield",
  "await",
  "else",
  "do",
]);

function regexMayStart(last: string): boolean {
  if (last === "") return true;
  if (/^[\w$]+$/.test(last)) return REGEX_AFTER_WORD.has(last);
  return !/[)\]}"'`]/.test(last);
}

const IMPORTS = [
  // import x from "…", import { a } from "…", import type …, export … from "…"
  /\b(?:import|export)\s+(?:type\s+)?(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+|\*)?\s*from\s*"([^"]+)"/g,
  /\bimport\s*"([^"]+)"/g,
  /\bimport\s*\(\s*"([^"]+)"\s*\)/g,
  /\blazy\s*(?:<[^>]*>)?\(\s*"([^"]+)"/g,
  /\bnew URL\(\s*"(\.\.?\/[^"]+)"\s*,\s*import\.meta\.url/g,
];

/** The relative specifiers a module imports, in any of the ways above. */
function importsOf(source: string): string[] {
  const code = codeOnly(source);
  const found: string[] = [];
  for (const pattern of IMPORTS) {
    for (const match of code.matchAll(pattern)) {
      if (match[1].startsWith(".")) found.push(match[1]);
    }
  }
  return found;
}

async function* sources(path: string): AsyncGenerator<string> {
  const info = await Deno.stat(join(ROOT, path));
  if (info.isFile) {
    yield path;
    return;
  }
  for await (const entry of Deno.readDir(join(ROOT, path))) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const child = `${path}/${entry.name}`;
    if (entry.isDirectory) yield* sources(child);
    else if (/\.ts$/.test(entry.name)) yield child;
  }
}

interface Edge {
  from: string;
  to: string;
}

async function productEdges(): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const top of PRODUCT) {
    for await (const from of sources(top)) {
      const text = await Deno.readTextFile(join(ROOT, from));
      for (const specifier of importsOf(text)) {
        const to = normalize(join(dirname(from), specifier)).split(sep).join(
          "/",
        );
        edges.push({ from, to });
      }
    }
  }
  return edges;
}

const edges = await productEdges();

/** Why `from` may not import `to`, or undefined when it may. */
function violation({ from, to }: Edge): string | undefined {
  const zone = zoneOf(from);
  if (zone === undefined) return `${from} belongs to no part of the layout`;
  const allowed = DEPS[zone];
  const own = serverOf(from);
  const target = serverOf(to);
  if (target !== undefined) {
    if (target === own) return undefined;
    const face = /^tools\/[^/]+\/(mod|config|tool_listings)\.ts$/.test(to);
    if (face && allowed.includes(FACE)) return undefined;
    return own !== undefined
      ? `a server imports another server (${to})`
      : face
      ? `${zone} may not import a server (${to})`
      : `${to} is inside a server: go through its mod.ts, config.ts or tool_listings.ts`;
  }
  const targetZone = zoneOf(to);
  if (targetZone === undefined) return `${to} is outside the layout`;
  return allowed.includes(targetZone)
    ? undefined
    : `${zone} may not import ${targetZone} (${to})`;
}

Deno.test("structure: the import reader finds every form and skips comments, templates and regular expressions", () => {
  const source = [
    `import { a,`,
    `  b } from "./multi.ts";`,
    `import type { T } from "../type.ts";`,
    `import def, { c } from "./default.ts";`,
    `import * as all from "./all.ts";`,
    `export { d } from "./reexport.ts";`,
    `export * from "./star.ts";`,
    `import "./effect.ts";`,
    `// import { no } from "./comment.ts";`,
    `/* import { no } from "./block.ts"; */`,
    "const t = `",
    `import { no } from "./template.ts";`,
    '${ident(`x`)} and ${import("./in_template.ts")}`;',
    `const r = /"[^"]*"/g; const s = "a // not a comment";`,
    `const q = x / 2; const u = import("./dynamic.ts");`,
    `type M = typeof import("./typed.ts");`,
    `const m = await lazy<typeof import("./lazy.ts")>(`,
    `  "./lazy.ts", import.meta.url);`,
    `const w = new URL("./worker.ts", import.meta.url);`,
    `const z = import("npm-package");`,
  ].join("\n");
  assert.deepEqual(importsOf(source).sort(), [
    "../type.ts",
    "./all.ts",
    "./default.ts",
    "./dynamic.ts",
    "./effect.ts",
    "./in_template.ts",
    "./lazy.ts",
    "./lazy.ts",
    "./multi.ts",
    "./reexport.ts",
    "./star.ts",
    "./typed.ts",
    "./worker.ts",
  ]);
});

Deno.test("structure: every relative import names a file that exists", async () => {
  assert.ok(edges.length > 500, `only ${edges.length} imports read`);
  const missing: string[] = [];
  for (const { from, to } of edges) {
    try {
      await Deno.stat(join(ROOT, to));
    } catch {
      missing.push(`${from} → ${to}`);
    }
  }
  assert.deepEqual(missing, []);
});

Deno.test("structure: every import points down the layout (DEPS)", () => {
  const found = edges.flatMap((edge) => {
    const why = violation(edge);
    return why === undefined ? [] : [`${edge.from}: ${why}`];
  });
  assert.deepEqual([...new Set(found)].sort(), []);
});

Deno.test("structure: platform/ holds no module that only one server uses", () => {
  // Who imports each platform module: a server by name, any other part by its zone.
  const users = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (!to.startsWith("platform/")) continue;
    const server = serverOf(from);
    const user = server !== undefined ? `server ${server}` : zoneOf(from);
    users.set(to, (users.get(to) ?? new Set()).add(user ?? from));
  }
  const single: string[] = [];
  for (const [path, by] of users) {
    const [only] = by;
    if (by.size === 1 && only.startsWith("server ")) {
      single.push(`${path} serves only tools/${only.slice(7)}/: move it there`);
    }
  }
  assert.deepEqual(single.sort(), []);
});

Deno.test("structure: the rules catch what they must", () => {
  const cases: [string, string, boolean][] = [
    ["platform/log.ts", "tools/kit/mod.ts", false],
    ["platform/log.ts", "ffi/x11.ts", true],
    ["tools/kit/mod.ts", "tools/kit/transport/http_server.ts", false],
    ["tools/kit/transport/sdk_server.ts", "tools/kit/host.ts", true],
    ["tools/memory/mod.ts", "tools/gateway/mod.ts", false],
    ["tools/in-page/mod.ts", "tools/kit/transport/http_client.ts", false],
    ["tools/gateway/transports.ts", "tools/kit/transport/http_client.ts", true],
    ["tools/memory/backends/kv.ts", "tools/memory/model.ts", true],
    ["cli/boot.ts", "tools/memory/mod.ts", true],
    ["cli/boot.ts", "tools/memory/service.ts", false],
    ["web/admin.ts", "tools/gateway/mod.ts", false],
    ["agents/service.ts", "tools/kit/transport/sdk_server.ts", false],
    ["agents/service.ts", "routes/mod.ts", false],
    ["tools/registry.ts", "tools/in-page/config.ts", true],
  ];
  for (const [from, to, ok] of cases) {
    assert.equal(
      violation({ from, to }) === undefined,
      ok,
      `${from} → ${to}`,
    );
  }
});

Deno.test("structure: no import loops between product files", () => {
  const graph = new Map<string, string[]>();
  for (const { from, to } of edges) {
    graph.set(from, [...(graph.get(from) ?? []), to]);
  }
  // Tarjan's strongly connected components, iteratively deep enough here.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, indices.get(next) ?? 0));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) loops.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  assert.deepEqual(loops, []);
});
