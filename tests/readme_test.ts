// README.md as a newcomer follows it: every ```sh runnable block runs with
// bash, in order, against the daemon its `daemon` block starts (the real
// `deno task start`), with the local model server standing in for the
// provider. Each `#>` line is output the README shows, shortened at `…`: its
// pieces must appear in the block's output, in order.

import assert from "node:assert/strict";
import { join } from "node:path";
import { freePort, ROOT, tempDir, waitFor } from "./helpers.ts";
import { main } from "../main.ts";
import { FIRST_STEPS } from "../cli/args.ts";
import { startModelServer } from "./agents/model_server.ts";

interface Block {
  daemon: boolean;
  script: string;
  expected: string[];
}

const BLOCK_RE = /^```sh runnable( daemon)?\n([\s\S]*?)^```$/gm;
const README_PORT = "8765";
const README_DENO = "npx -y deno@2.9.6";

export function runnableBlocks(markdown: string): Block[] {
  return [...markdown.matchAll(BLOCK_RE)].map((match) => {
    const lines = match[2].split("\n");
    return {
      daemon: match[1] !== undefined,
      script: lines.filter((line) => !line.startsWith("#>")).join("\n"),
      expected: lines.filter((line) => line.startsWith("#>")).map((line) =>
        line.replace(/^#> ?/, "")
      ),
    };
  });
}

/** The pieces of every `#>` line, split at `…`, found in order; else the first one missing. */
export function missingPiece(
  output: string,
  expected: string[],
): string | undefined {
  let at = 0;
  for (const line of expected) {
    for (const piece of line.split("…").filter((p) => p !== "")) {
      const found = output.indexOf(piece, at);
      if (found === -1) return piece;
      at = found + piece.length;
    }
  }
  return undefined;
}

function localize(script: string, port: number): string {
  // The README's deno is fetched by npx; here it is the one running the tests.
  return script.replaceAll(README_DENO, JSON.stringify(Deno.execPath()))
    .replaceAll(README_PORT, String(port));
}

Deno.test("readme: the expected-output check is strict about order and content", () => {
  const blocks = runnableBlocks(
    '```sh runnable\necho hi\n#> {"a":1,…"b":2}\n```\n```sh\nnot run\n```\n',
  );
  assert.equal(blocks.length, 1);
  assert.equal(blocks[0].script, "echo hi\n");
  assert.equal(
    missingPiece('{"a":1,"x":0,"b":2}', blocks[0].expected),
    undefined,
  );
  assert.equal(missingPiece('{"b":2}{"a":1,', blocks[0].expected), '"b":2}');
  assert.equal(missingPiece('{"a":1,"c":3}', blocks[0].expected), '"b":2}');
});

Deno.test("readme: every runnable command works against a real daemon", async () => {
  const markdown = await Deno.readTextFile(join(ROOT, "README.md"));
  const blocks = runnableBlocks(markdown);
  const daemons = blocks.filter((block) => block.daemon);
  const steps = blocks.filter((block) => !block.daemon);
  assert.equal(daemons.length, 1, "one ```sh runnable daemon block");
  // The README promises an agent's answer and an MCP tool call: both must be run here.
  const all = steps.map((step) => step.script).join("\n");
  assert.match(all, /\/v1\/agents\/helper\/send/);
  assert.match(all, /"method":"tools\/call"/);
  assert.ok(steps.every((step) => step.expected.length > 0));

  await using models = await startModelServer();
  await using dir = await tempDir();
  const config = join(dir.path, "agentd.json");
  await Deno.writeTextFile(config, "{}\n");
  const port = freePort();
  const env = {
    ...Deno.env.toObject(),
    NO_COLOR: "1",
    OPENAI_BASE_URL: models.openaiBaseUrl,
    AGENTD_CONFIG: config,
    AGENTD_DATA_DIR: join(dir.path, "data"),
    AGENTD_PORT: String(port),
  };
  // Its own process group, so the daemon under `deno task` stops with it.
  const daemon = new Deno.Command("setsid", {
    args: ["-w", "bash", "-c", localize(daemons[0].script, port)],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(daemon.stderr).text();
  try {
    await waitFor(
      () =>
        fetch(`http://127.0.0.1:${port}/health`).then(
          async (res) => {
            await res.body?.cancel();
            return res.status;
          },
          () => 0,
        ),
      (status) => status === 200,
      60_000,
    );
    for (const step of steps) {
      const script = localize(step.script, port);
      const result = await new Deno.Command("bash", {
        args: ["-c", `set -euo pipefail\n${script}`],
        cwd: ROOT,
        env,
        stdin: "null",
      }).output();
      const stdout = new TextDecoder().decode(result.stdout);
      const context = `${script}\n--- stdout:\n${stdout}\n--- stderr:\n${
        new TextDecoder().decode(result.stderr)
      }`;
      assert.equal(result.code, 0, context);
      const missing = missingPiece(stdout, step.expected);
      assert.equal(missing, undefined, `"${missing}" not in:\n${context}`);
    }
    // The answers came from the model server standing in for the provider.
    assert.ok(models.requests.length >= 5, `${models.requests.length} calls`);
    assert.ok(models.requests.every((req) => req.api === "openai"));
  } finally {
    Deno.kill(-daemon.pid, "SIGTERM");
    await daemon.status;
    await stderr; // closes once the daemon under `deno task` has exited too
  }
});

Deno.test("readme: every help ends with the first steps, which point at a README section", async () => {
  const markdown = await Deno.readTextFile(join(ROOT, "README.md"));
  const section = FIRST_STEPS.match(/README\.md, "([^"]+)"/)?.[1];
  assert.ok(section && markdown.includes(`\n## ${section}\n`), section);
  // The help's commands are the README's, shortened: same paths and names.
  for (const piece of ["/v1/agents/helper/send", '"name":"helper"', "/mcp"]) {
    assert.ok(FIRST_STEPS.includes(piece) && markdown.includes(piece), piece);
  }
  const helps = [
    ["--help"],
    ["serve", "--help"],
    ["mcp", "--help"],
    ["mcp", "memory", "--help"],
    ["doctor", "--help"],
    ["ui", "--help"],
    ["service", "--help"],
    ["native-host", "--help"],
    ["native-host", "install", "--help"],
  ];
  for (const args of helps) {
    let out = "";
    const code = await main(args, { print: (text) => out += text });
    assert.equal(code, 0, args.join(" "));
    assert.ok(
      out.trimEnd().endsWith(FIRST_STEPS),
      `${args.join(" ")}:\n${out}`,
    );
  }
});

function slug(heading: string): string {
  return heading.toLowerCase().replace(/[^a-z0-9 _-]/g, "").replaceAll(
    " ",
    "-",
  );
}

Deno.test("readme: under 250 lines, JSON snippets parse, local links and anchors resolve", async () => {
  const markdown = await Deno.readTextFile(join(ROOT, "README.md"));
  assert.ok(markdown.split("\n").length <= 250, "README.md over 250 lines");
  const snippets = [...markdown.matchAll(/^```json\n([\s\S]*?)^```$/gm)];
  assert.ok(snippets.length >= 2);
  for (const [, json] of snippets) JSON.parse(json);
  const links = [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
    .filter((link) => !/^[a-z]+:/.test(link));
  assert.ok(links.length > 10);
  for (const link of links) {
    const [path, anchor] = link.split("#");
    const file = join(ROOT, path || "README.md");
    const text = await Deno.readTextFile(file).catch(() => undefined);
    assert.ok(text !== undefined || (await Deno.stat(file)).isFile, link);
    if (anchor && text !== undefined) {
      const slugs = [...text.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]));
      assert.ok(slugs.includes(anchor), `${link}: no heading #${anchor}`);
    }
  }
});
