// Issue 33, row 5: the policy sees canonical arguments. A deny rule such as
// the documented `no-ssh` holds for every spelling of a denied path (doubled
// slashes, `/./`, `x/../x`, a trailing slash, a symbolic link into it, a
// relative path, case on a case-folding OS) and of a denied URL (scheme and
// host case, default port, userinfo, trailing dot, percent-escapes, dot
// segments); and through the daemon, file_read refuses each spelling.

import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import {
  canonicalPath,
  canonicalUrl,
  type OsName,
  realPattern,
} from "../../platform/canonical.ts";
import {
  evaluate,
  PolicyConfig,
  type ToolFacts,
} from "../../platform/policy.ts";
import { spawnServe, tempDir, textOf } from "../helpers.ts";
import { startXvfb, xTestIgnore } from "../tools/desktop-control/xvfb.ts";

/** A home with a `.ssh` directory, a link into it, and a sibling to step through. */
async function homeTree(root: string): Promise<void> {
  await Deno.mkdir(join(root, "home", "ann", ".ssh"), { recursive: true });
  await Deno.mkdir(join(root, "home", "ann", "work"), { recursive: true });
  await Deno.writeTextFile(join(root, "home", "ann", ".ssh", "id_rsa"), "KEY");
  await Deno.symlink(
    join(root, "home", "ann", ".ssh"),
    join(root, "home", "ann", "work", "keys"),
  );
}

/** The spellings of `<root>/home/ann/.ssh/id_rsa` an attacker could try. */
function spellings(root: string) {
  const separator = fc.constantFrom("/", "//", "/./", "/././", "///");
  // Each step into a directory may detour through a sibling and back.
  const detour = fc.constantFrom("", "work/../", "../ann/", ".ssh/../");
  const into = fc.constantFrom(".ssh", "work/keys");
  const tail = fc.constantFrom("id_rsa", "id_rsa/", "./id_rsa", "id_rsa/.");
  return fc.record({ separator, detour, into, tail }).map((
    { separator, detour, into, tail },
  ) =>
    `${root}${separator}home${separator}ann${separator}${detour}${into}${separator}${tail}`
  );
}

function readFacts(path: string, caller: ToolFacts["caller"]): ToolFacts {
  return {
    server: "desktop-control",
    tool: "file_read",
    args: { path },
    caller,
    touches: [],
    argKinds: { path: "path" },
  };
}

Deno.test("security: every spelling of a denied path is refused once canonical", async () => {
  await using dir = await tempDir();
  const root = await Deno.realPath(dir.path);
  await homeTree(root);
  const policy = PolicyConfig.parse({
    rules: [{
      id: "no-ssh",
      server: "desktop-control",
      tool: "file_*",
      args: { path: `${root}/home/*/.ssh/**` },
      decision: "deny",
    }],
  });
  await fc.assert(
    fc.asyncProperty(spellings(root), async (spelling) => {
      const path = await canonicalPath(spelling, { base: root });
      assert.equal(path, join(root, "home", "ann", ".ssh", "id_rsa"), spelling);
      assert.deepEqual(
        evaluate(policy, readFacts(path, { agent: "bot" })),
        { decision: "deny", rule: "no-ssh" },
        spelling,
      );
    }),
    { numRuns: 200 },
  );
  // Relative to the tool's first root, and a file that does not exist yet.
  assert.equal(
    await canonicalPath("home/ann/work/keys/new", { base: root }),
    join(root, "home", "ann", ".ssh", "new"),
  );
  // Elsewhere stays allowed.
  const work = await canonicalPath(`${root}/home/ann/work/notes.txt`);
  assert.equal(evaluate(policy, readFacts(work, {})).decision, "allow");
});

Deno.test("security: a rule written through a link (/tmp on macOS) also names the real directory", async () => {
  await using dir = await tempDir();
  const root = await Deno.realPath(dir.path);
  await homeTree(root);
  const linked = join(root, "home", "ann", "work", "keys");
  assert.equal(
    await realPattern(`${linked}/**`),
    join(root, "home", "ann", ".ssh") + "/**",
  );
  assert.equal(
    await realPattern(`${root}/home/*/work/keys/**`),
    undefined,
    "a link below the first glob is left alone",
  );
  assert.equal(await realPattern(`${root}/home/ann/**`), undefined);
  assert.equal(await realPattern("https://example.com/**"), undefined);
});

Deno.test("security: on a case-folding OS, case spellings of a denied path are refused", async () => {
  const rule = {
    id: "no-ssh",
    server: "desktop-control",
    tool: "file_*",
    args: { path: "/Users/*/.ssh/**" },
    decision: "deny",
  };
  const policy = PolicyConfig.parse({ rules: [rule] });
  const mixCase = (text: string) =>
    fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length })
      .map((upper) =>
        [...text].map((c, i) => upper[i] ? c.toUpperCase() : c.toLowerCase())
          .join("")
      );
  // Nothing exists on this machine at /Users: no link resolves, the case stays as given.
  const missing = (path: string) =>
    Promise.reject(new Deno.errors.NotFound(path));
  for (const os of ["darwin", "windows"] satisfies OsName[]) {
    await fc.assert(
      fc.asyncProperty(
        mixCase("/users/ann/.ssh/id_rsa"),
        async (spelling) => {
          const path = await canonicalPath(
            os === "windows" ? `C:${spelling.replaceAll("/", "\\")}` : spelling,
            { os, realPath: missing },
          );
          const facts = readFacts(
            os === "windows" ? path.replace(/^[cC]:/, "") : path,
            {},
          );
          assert.equal(evaluate(policy, facts, { os }).rule, "no-ssh", path);
        },
      ),
      { numRuns: 100 },
    );
  }
  // Linux does not fold case: /users is not /Users there.
  assert.equal(
    evaluate(policy, readFacts("/users/ann/.ssh/id_rsa", {}), { os: "linux" })
      .rule,
    "default",
  );
});

Deno.test("security: every spelling of a denied URL is refused once canonical", () => {
  const policy = PolicyConfig.parse({
    rules: [{
      id: "no-evil",
      tool: "navigate",
      args: { url: "https://evil.example/admin/**" },
      decision: "deny",
    }],
  });
  const mixCase = (text: string) =>
    fc.array(fc.boolean(), { minLength: text.length, maxLength: text.length })
      .map((upper) =>
        [...text].map((c, i) => upper[i] ? c.toUpperCase() : c).join("")
      );
  const url = fc.record({
    scheme: mixCase("https"),
    userinfo: fc.constantFrom("", "user@", "user:pw@", "evil.example@"),
    host: mixCase("evil.example"),
    dot: fc.constantFrom("", "."),
    port: fc.constantFrom("", ":443"),
    admin: fc.constantFrom("admin", "%61dmin", "%61%64%6D%69%6E", "ADMIN"),
    path: fc.constantFrom("/x", "/./x", "/y/../x", "//x", "/x?q=1"),
    detour: fc.constantFrom("", "/foo/..", "/."),
  }).map(({ scheme, userinfo, host, dot, port, admin, path, detour }) =>
    `${scheme}://${userinfo}${host}${dot}${port}${detour}/${admin}${path}`
  );
  fc.assert(
    fc.property(url, (spelling) => {
      const facts: ToolFacts = {
        server: "browser-automation",
        tool: "navigate",
        args: { url: canonicalUrl(spelling) },
        caller: { agent: "bot" },
        touches: [],
        argKinds: { url: "url" },
      };
      const verdict = evaluate(policy, facts);
      // A path that is "ADMIN" is another path on a case-sensitive server.
      if (spelling.includes("/ADMIN")) return verdict.rule !== "no-evil";
      return verdict.rule === "no-evil";
    }),
    { numRuns: 500 },
  );
  // Another host is not caught by a prefix: evil.example.other.com.
  const other = canonicalUrl("https://evil.example.other.com/admin/x");
  assert.equal(
    evaluate(policy, {
      server: "browser-automation",
      tool: "navigate",
      args: { url: other },
      caller: {},
      argKinds: { url: "url" },
    }).rule,
    "default",
  );
});

Deno.test({
  name:
    "security: through the daemon, file_read refuses every spelling of a denied directory",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const root = await Deno.realPath(dir.path);
    await Deno.mkdir(join(root, "secret"));
    await Deno.mkdir(join(root, "work"));
    await Deno.writeTextFile(join(root, "secret", "key.txt"), "SECRET-9f2c");
    await Deno.writeTextFile(join(root, "work", "ok.txt"), "fine");
    await Deno.symlink(join(root, "secret"), join(root, "work", "link"));
    const config = join(root, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        servers: ["desktop-control"],
        "desktop-control": { allowed_roots: [root] },
        policy: {
          rules: [{
            id: "no-secret",
            server: "desktop-control",
            tool: "file_*",
            args: { path: `${root}/secret/**` },
            decision: "deny",
          }],
        },
      }),
    );
    // desktop-control runs only with a display, even for its file tools.
    const x = await startXvfb();
    const daemon = await spawnServe(join(root, "data"), {
      extra: ["--config", config],
      env: { DISPLAY: x.display },
    }).catch(async (error) => {
      await x.close();
      throw error;
    });
    const client = new Client({ name: "policy-args", version: "1.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(`${daemon.url}/mcp/desktop-control`),
        ),
      );
      const read = (path: string) =>
        client.callTool({ name: "file_read", arguments: { path } });
      const ok = await read(`${root}/work/ok.txt`);
      assert.equal(textOf(ok), "fine");
      for (
        const spelling of [
          `${root}/secret/key.txt`,
          `${root}//secret/key.txt`,
          `${root}/./secret/key.txt`,
          `${root}/work/../secret/key.txt`,
          `${root}/secret//./key.txt`,
          `${root}/work/link/key.txt`,
          "secret/key.txt",
          "work/link/key.txt",
        ]
      ) {
        const result = await read(spelling);
        assert.equal(result.isError, true, `${spelling}: ${textOf(result)}`);
        assert.match(textOf(result), /"no-secret"/, spelling);
        assert.doesNotMatch(textOf(result), /SECRET-9f2c/, spelling);
      }
    } finally {
      await client.close().catch(() => {});
      await daemon.stop();
      await x.close();
    }
  },
});

Deno.test({
  name:
    "security: through the daemon, register_server refuses every spelling of a denied upstream URL",
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const config = join(dir.path, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        servers: ["gateway"],
        policy: {
          rules: [{
            id: "no-loopback-upstreams",
            server: "gateway",
            tool: "register_server",
            args: { url: "http://127.0.0.1:*/**" },
            decision: "deny",
          }],
        },
      }),
    );
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: ["--config", config],
    });
    const client = new Client({ name: "policy-args", version: "1.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp/gateway`)),
      );
      const spellingsOfLoopback = [
        "http://127.0.0.1:9/mcp",
        "HTTP://127.0.0.1:9/mcp",
        "http://user:pw@127.0.0.1:9/mcp",
        "http://0x7f.1:9/mcp",
        "http://2130706433:9/mcp",
        "http://127.0.0.1.:9/mcp",
        "http://127.0.0.1:9/./x/../mcp",
        "http://127.1:9/mcp",
      ];
      for (const [index, url] of spellingsOfLoopback.entries()) {
        const result = await client.callTool({
          name: "register_server",
          arguments: { name: `probe${index}`, url },
        });
        assert.equal(result.isError, true, `${url}: ${textOf(result)}`);
        assert.match(textOf(result), /"no-loopback-upstreams"/, url);
      }
    } finally {
      await client.close().catch(() => {});
      await daemon.stop();
    }
  },
});
