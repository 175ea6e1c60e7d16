// Pins what `agentd mcp memory` loads: the module graphs of main.ts,
// cli/mcp.ts (imported when the command is `mcp`) and tools/memory/mod.ts
// (imported by the registry when the server is memory), as `deno info`
// reports them. Literal dynamic imports count: Deno reads their graphs when
// the importing module loads (platform/lazy.ts avoids that). A later import
// of the daemon's routes, the agent runtime, another server, FFI code or a
// heavy library would undo the cold start, and fails here.

import assert from "node:assert/strict";
import { ROOT } from "../helpers.ts";

interface Dependency {
  specifier: string;
  code?: { specifier: string };
  isDynamic?: boolean;
}
interface GraphModule {
  specifier: string;
  dependencies?: Dependency[];
}
interface Graph {
  modules: GraphModule[];
  redirects: Record<string, string>;
}

const root = new URL(`file://${ROOT.endsWith("/") ? ROOT : `${ROOT}/`}`).href;

async function graph(entry: string): Promise<Graph> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** Every module `entry` loads: its code imports, literal dynamic ones included, not type-only ones. */
async function codeClosure(entry: string): Promise<Set<string>> {
  const g = await graph(entry);
  const byName = new Map(g.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [root + entry];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const specifier = g.redirects[next] ?? next;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dep of byName.get(specifier)?.dependencies ?? []) {
      if (dep.code) stack.push(dep.code.specifier);
    }
  }
  return seen;
}

// The agents section schemas are validated by every face (one config file serves all).
const ALLOWED_AGENTS = new Set([
  "agents/config.ts",
  "agents/providers/config.ts",
]);
const FORBIDDEN_NPM = [
  "hono",
  "puppeteer-core",
  "oauth4webapi",
  "oidc-provider",
  "@a2a-js/sdk",
  // Only a postgres:// memory store needs the driver.
  "postgres",
  // JWT verification: the config section is platform/jwt_config.ts.
  "jose",
  "jpeg-js",
  "fast-png",
];
// Local modules that pull a heavy library or the daemon's HTTP side.
const FORBIDDEN_LOCAL = [
  "platform/jwt.ts",
  "tools/platform-auth/oauth.ts",
  "platform/puppeteer.ts",
  "platform/browser.ts",
  "tools/desktop-control/image_codec.ts",
  "platform/store/pg.ts",
  "tools/kit/transport/http_server.ts",
  // The whole SDK seam, client side included: the kit's stdio path uses
  // platform/mcp_sdk_server.ts.
  "platform/mcp_sdk.ts",
  // Hosted mode (MCP client, KV Connect, write queue) loads for --storage hosted only.
  "tools/memory/backends/open_hosted.ts",
  "tools/memory/backends/hosted.ts",
  "tools/memory/backends/mcp.ts",
  "tools/memory/backends/kv_connect.ts",
];
// The SDK's client side (cross-spawn, eventsource-parser, the OAuth client).
const SDK_CLIENT = /^npm:\/@modelcontextprotocol\/sdk@[^/]+\/client(\/|$)/;

Deno.test("agentd mcp memory loads no routes, agents, other servers, FFI or heavy libraries", async () => {
  const loaded = new Set<string>();
  for (
    const entry of [
      "main.ts",
      "cli/main.ts",
      "cli/mcp.ts",
      "tools/memory/mod.ts",
    ]
  ) {
    for (const specifier of await codeClosure(entry)) loaded.add(specifier);
  }
  const local = [...loaded].filter((s) => s.startsWith(root)).map((s) =>
    s.slice(root.length)
  );
  assert.ok(
    local.includes("tools/kit/transport/sdk_server.ts"),
    "the graph walk found the kit",
  );
  const offending = local.filter((path) =>
    path.startsWith("routes/") ||
    // The C library's few symbols (the KV change mark's mapping): a table,
    // opened on the first read of a mark, not at load.
    (path.startsWith("ffi/") && path !== "ffi/libc.ts") ||
    (path.startsWith("agents/") && !ALLOWED_AGENTS.has(path)) ||
    (path.startsWith("tools/") && !path.startsWith("tools/kit/") &&
      !path.startsWith("tools/memory/") && path !== "tools/registry.ts" &&
      // The built-in servers' SVG icons: data, for serverInfo.
      path !== "tools/icons.ts") ||
    ["cli/http_face.ts", "cli/agents.ts", "cli/serve.ts", "cli/doctor.ts"]
      .includes(path) ||
    FORBIDDEN_LOCAL.includes(path)
  );
  assert.deepEqual(offending, []);
  const npm = [...loaded].filter((s) => s.startsWith("npm:"));
  assert.ok(npm.some((s) => s.includes("@modelcontextprotocol/sdk")));
  const heavy = npm.filter((s) =>
    FORBIDDEN_NPM.some((name) => s.startsWith(`npm:/${name}@`))
  );
  assert.deepEqual(heavy, []);
  assert.deepEqual(npm.filter((s) => SDK_CLIENT.test(s)), []);
});

// The stdio front (cli/stdio_front.ts) answers initialize and tools/list of
// `agentd mcp <server>` before anything else loads: what runs before its
// first answer is main.ts's graph and the server's generated listings, and
// that holds no npm module (no MCP SDK, zod or ajv), no config and no CLI.
const BEFORE_THE_FIRST_ANSWER = new Set([
  "main.ts",
  "platform/lazy.ts",
  "cli/stdio_front.ts",
  "tools/kit/icons.ts",
  "platform/base64.ts",
  "platform/stdout.ts",
  "platform/line_frames.ts",
]);

Deno.test("the stdio front's path loads no npm module, config or CLI before its first answer", async () => {
  const { FRONT_SERVERS } = await import("../../cli/stdio_front.ts");
  assert.ok(FRONT_SERVERS.includes("memory"));
  const loaded = await codeClosure("main.ts");
  for (const id of FRONT_SERVERS) {
    for (const specifier of await codeClosure(`tools/${id}/tool_listings.ts`)) {
      loaded.add(specifier);
    }
  }
  const npm = [...loaded].filter((s) => !s.startsWith(root));
  assert.deepEqual(npm, []);
  const local = [...loaded].map((s) => s.slice(root.length)).filter((path) =>
    !BEFORE_THE_FIRST_ANSWER.has(path) &&
    !/^tools\/[a-z-]+\/tool_listings\.ts$/.test(path)
  );
  assert.deepEqual(local, []);
  assert.ok(
    loaded.has(`${root}cli/stdio_front.ts`),
    "the walk found the front",
  );
});

// Idle memory (bench/README.md): a daemon that never starts a browser, takes
// a screenshot, runs an OAuth grant or verifies a JWT does not hold
// puppeteer-core, the npm image codecs, oauth4webapi or jose; and no module
// holds the SDK's stdio client (cross-spawn, CommonJS: about 2 MiB), since the
// gateway spawns its stdio upstreams with its own transport.
const LOADED_ON_FIRST_USE = [
  "puppeteer-core",
  "fast-png",
  "jpeg-js",
  "oauth4webapi",
  "jose",
];
// The graph names npm modules by their import specifier.
const SDK_STDIO_CLIENT =
  /^npm:\/@modelcontextprotocol\/sdk@[^/]+\/client\/stdio(\.js)?$/;

// Seams of those libraries, and the desktop backends with their FFI bindings:
// desktop-control opens only this OS's backend, when it starts.
const LOCAL_ON_FIRST_USE = [
  "tools/platform-auth/oauth.ts",
  "platform/jwt.ts",
  "tools/desktop-control/backends/x11.ts",
  "tools/desktop-control/backends/darwin.ts",
  "tools/desktop-control/backends/win32.ts",
  "ffi/x11.ts",
  "ffi/darwin.ts",
  "ffi/win32.ts",
];

Deno.test("agentd serve loads puppeteer-core, the image codecs, oauth4webapi and jose only on first use, and never the SDK's stdio client", async () => {
  const entries = [
    "main.ts",
    "cli/main.ts",
    "cli/serve.ts",
    "cli/http_face.ts",
    ...[
      "gateway",
      "browser-automation",
      "extension-bridge",
      "in-page",
      "desktop-control",
      "memory",
      "platform-auth",
    ].map((id) => `tools/${id}/mod.ts`),
  ];
  const loaded = new Set<string>();
  for (const entry of entries) {
    for (const specifier of await codeClosure(entry)) loaded.add(specifier);
  }
  assert.ok(
    loaded.has(`${root}platform/browser.ts`),
    "the graph walk reached the browser seam",
  );
  const npm = [...loaded].filter((s) =>
    LOADED_ON_FIRST_USE.some((name) => s.startsWith(`npm:/${name}@`))
  );
  assert.deepEqual(npm, []);
  assert.deepEqual([...loaded].filter((s) => SDK_STDIO_CLIENT.test(s)), []);
  const local = LOCAL_ON_FIRST_USE.filter((path) => loaded.has(root + path));
  assert.deepEqual(local, []);
});

// Idle memory (bench/README.md): `serve` validates every config section from
// each server's config.ts, then loads only the servers it runs (all by
// default) through the registry. Its own start graph therefore holds no
// server module, and a config.ts holds no server code.
const SERVER_FOLDERS = [
  "gateway",
  "browser-automation",
  "extension-bridge",
  "in-page",
  "desktop-control",
  "memory",
  "platform-auth",
];

/** Every module `agentd serve` loads at start (its entry modules' closures). */
async function serveStartGraph(): Promise<Set<string>> {
  const loaded = new Set<string>();
  for (
    const entry of [
      "main.ts",
      "cli/main.ts",
      "cli/serve.ts",
      "cli/boot.ts",
      "cli/http_face.ts",
      "cli/agents.ts",
    ]
  ) {
    for (const specifier of await codeClosure(entry)) loaded.add(specifier);
  }
  return loaded;
}

Deno.test("agentd serve's start graph holds no server module", async () => {
  const loaded = await serveStartGraph();
  assert.ok(
    loaded.has(`${root}routes/mod.ts`),
    "the graph walk reached the routes",
  );
  const servers = [...loaded].filter((s) =>
    SERVER_FOLDERS.some((id) => s.startsWith(`${root}tools/${id}/`))
  );
  assert.deepEqual(servers, []);
});

// Idle memory (bench/README.md): @a2a-js/sdk (about 1 MiB) loads with the
// first message to a remote agent (agents/a2a/sdk_client.ts), not with the
// routes and agents that may send one.
Deno.test("agentd serve loads @a2a-js/sdk only when a remote agent is called", async () => {
  const loaded = await serveStartGraph();
  assert.ok(
    loaded.has(`${root}agents/a2a/client.ts`),
    "the graph walk reached the remote agents client",
  );
  assert.ok(!loaded.has(`${root}agents/a2a/sdk_client.ts`));
  assert.deepEqual(
    [...loaded].filter((s) => s.startsWith("npm:/@a2a-js/sdk@")),
    [],
  );
  const seam = await codeClosure("agents/a2a/sdk_client.ts");
  assert.ok(
    [...seam].some((s) => s.startsWith("npm:/@a2a-js/sdk@")),
    "the graph names the SDK as npm:/@a2a-js/sdk@…",
  );
});

// Memory's config.ts imports its embedder and service defaults (its owner's files).
Deno.test("a server's config section loads without the server", async () => {
  for (const id of SERVER_FOLDERS.filter((id) => id !== "memory")) {
    const local = [...await codeClosure(`tools/${id}/config.ts`)]
      .filter((s) => !s.startsWith("npm:"))
      .map((s) => s.slice(root.length));
    assert.deepEqual(local, [`tools/${id}/config.ts`], id);
  }
  const memory = [...await codeClosure("tools/memory/config.ts")];
  assert.ok(!memory.includes(`${root}tools/memory/mod.ts`));
  assert.ok(!memory.includes(`${root}tools/kit/transport/sdk_server.ts`));
});

// The tokenizer's start-up work is done ahead of time (a generated alias
// table, a pinned fingerprint) and snowball-stemmers runs on the first word
// stemmed: a start and stop of `agentd mcp memory` on an empty store stems
// nothing. Run in a child so no other test has stemmed first.
Deno.test("agentd mcp memory starts and stops without running the stemmer", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-stem-" });
  try {
    const script = `
      import { main } from "${root}main.ts";
      import { stemmerLoaded } from "${root}platform/snowball.ts";
      import { tokenize } from "${root}tools/memory/search_tokens.ts";
      const code = await main(["mcp", "memory", "--data-dir", ${
      JSON.stringify(dataDir)
    }]);
      const atStop = stemmerLoaded();
      tokenize("running");
      console.log(JSON.stringify({ code, atStop, afterText: stemmerLoaded() }));`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--unstable-kv", script],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.ok(out.success, stderr);
    const last = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1);
    assert.deepEqual(JSON.parse(last ?? "null"), {
      code: 0,
      atStop: false,
      afterText: true,
    });
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

// Deno 2.9.6 never finds in its V8 code cache an npm module that only a
// dynamically imported module names: it compiles it from source and writes
// its cache again on every start. The stdio front (cli/stdio_front.ts) needs
// main.ts's static graph free of the SDK and zod, so the CLI (cli/main.ts)
// loads dynamically, after the front's answers, and the npm modules it
// names are those compiled again (about 20-40 ms of CPU per start, after
// the answer; bench/README.md, the memory cold start). This pins that set:
// a module added to it (another npm seam reached dynamically) fails here.
// Deno's debug log says which modules it re-caches.
const RECACHED_AFTER_THE_FRONT = [
  "@modelcontextprotocol/sdk/dist/esm/inMemory.js",
  "@modelcontextprotocol/sdk/dist/esm/server/index.js",
  "@modelcontextprotocol/sdk/dist/esm/shared/uriTemplate.js",
  "@modelcontextprotocol/sdk/dist/esm/types.js",
  "@modelcontextprotocol/sdk/dist/esm/validation/ajv-provider.js",
  "snowball-stemmers/snowball-stemmers.js",
  "zod/index.js",
];

Deno.test("a warm agentd mcp memory start re-caches only the npm modules the CLI's dynamic load names", async () => {
  // A DENO_DIR of its own: other tests' processes (other V8 flags) re-cache
  // the shared one's entries, which would hide or fake the fault.
  const denoDir = await Deno.makeTempDir({ prefix: "agentd-denodir-" });
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-codecache-" });
  const start = async () => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "main.ts", "mcp", "memory", "--data-dir", dataDir],
      cwd: ROOT,
      env: { DENO_LOG: "debug", DENO_DIR: denoDir },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(out.success);
    return new TextDecoder().decode(out.stderr).split("\n");
  };
  try {
    await start();
    const log = await start();
    assert.ok(
      log.some((line) =>
        line.includes("V8 code cache hit for ES module: file:")
      ),
      "the debug log still names code cache hits",
    );
    const recached = log.filter((line) =>
      /Updating V8 code cache for ES module: file:/.test(line)
    ).map((line) =>
      line.replace(
        /^.*file:\/\/\S*?node_modules\/(\.deno\/[^/]+\/node_modules\/)?/,
        "",
      )
        .replace(/, \[\d+\]$/, "")
    ).sort();
    assert.deepEqual(recached, RECACHED_AFTER_THE_FRONT);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(denoDir, { recursive: true });
  }
});
