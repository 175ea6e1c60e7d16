// Pins what `agentd mcp memory` loads: the static module graph of main.ts,
// cli/mcp.ts (imported when the command is `mcp`) and tools/memory/mod.ts
// (imported by the registry when the server is memory), following static
// imports only, as `deno info` reports them. A later static import of the
// daemon's routes, the agent runtime, another server, FFI code or a heavy
// library would undo the cold start, and fails here.

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

async function graph(): Promise<Graph> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

function edges(g: Graph, from: string): Dependency[] {
  return g.modules.find((m) => m.specifier === root + from)?.dependencies ??
    [];
}

/** Every module reachable from `entries` through static (non-dynamic) code imports. */
function staticClosure(g: Graph, entries: string[]): Set<string> {
  const byName = new Map(g.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = entries.map((entry) => root + entry);
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const specifier = g.redirects[next] ?? next;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dep of byName.get(specifier)?.dependencies ?? []) {
      if (dep.code && !dep.isDynamic) stack.push(dep.code.specifier);
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
];

Deno.test("agentd mcp memory loads no routes, agents, other servers, FFI or heavy libraries", async () => {
  const g = await graph();
  // The entries below are reached through dynamic imports; check they still are.
  const dynamicFrom = (file: string) =>
    edges(g, file).filter((d) => d.isDynamic).map((d) => d.code?.specifier);
  assert.ok(dynamicFrom("main.ts").includes(`${root}cli/mcp.ts`));
  assert.ok(
    dynamicFrom("tools/registry.ts").includes(`${root}tools/memory/mod.ts`),
  );
  assert.ok(dynamicFrom("cli/mcp.ts").includes(`${root}cli/http_face.ts`));

  const loaded = staticClosure(g, [
    "main.ts",
    "cli/mcp.ts",
    "tools/memory/mod.ts",
  ]);
  const local = [...loaded].filter((s) => s.startsWith(root)).map((s) =>
    s.slice(root.length)
  );
  assert.ok(local.includes("tools/kit/mcp.ts"), "the graph walk found the kit");
  const offending = local.filter((path) =>
    path.startsWith("routes/") || path.startsWith("ffi/") ||
    (path.startsWith("agents/") && !ALLOWED_AGENTS.has(path)) ||
    (path.startsWith("tools/") && !path.startsWith("tools/kit/") &&
      !path.startsWith("tools/memory/") && path !== "tools/registry.ts") ||
    ["cli/http_face.ts", "cli/agents.ts", "cli/serve.ts", "cli/doctor.ts"]
      .includes(path)
  );
  assert.deepEqual(offending, []);
  const npm = [...loaded].filter((s) => s.startsWith("npm:"));
  assert.ok(npm.some((s) => s.includes("@modelcontextprotocol/sdk")));
  const heavy = npm.filter((s) =>
    FORBIDDEN_NPM.some((name) => s.startsWith(`npm:/${name}@`))
  );
  assert.deepEqual(heavy, []);
});
