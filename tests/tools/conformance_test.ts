// The official MCP conformance suite against our kit and transports, run
// under Deno (it needs Node 22's fs.globSync, and this machine has Node 20).

import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { ROOT, spawnDaemon, spawnServe, tempDir } from "../helpers.ts";

const SUITE = fromFileUrl(
  new URL(
    "../../node_modules/@modelcontextprotocol/conformance/dist/index.js",
    import.meta.url,
  ),
);
const BASELINE = fromFileUrl(
  new URL("./conformance_baseline.yml", import.meta.url),
);

async function runSuite(
  url: string,
  extra: string[],
): Promise<{ code: number; output: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      SUITE,
      "server",
      "--url",
      url,
      "--expected-failures",
      BASELINE,
      ...extra,
    ],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(output.stdout) +
    new TextDecoder().decode(output.stderr);
  return { code: output.code, output: text };
}

/** Reads `Total: N passed, M failed` (a suite) or `Passed: N/T, M failed` (one scenario). */
function totals(output: string): { passed: number; failed: number } {
  const match = output.match(/Total: (\d+) passed, (\d+) failed/) ??
    output.match(/Passed: (\d+)\/\d+, (\d+) failed/);
  assert.ok(match, `no totals in suite output:\n${output.slice(-2000)}`);
  return { passed: Number(match[1]), failed: Number(match[2]) };
}

/** Runs each scenario alone against `url`; each must pass with no failed check. */
async function passScenarios(url: string, scenarios: string[]): Promise<void> {
  for (const scenario of scenarios) {
    const { code, output } = await runSuite(url, ["--scenario", scenario]);
    const { passed, failed } = totals(output);
    assert.equal(failed, 0, output);
    assert.ok(passed > 0, output);
    assert.equal(code, 0, output);
  }
}

Deno.test("conformance suite (all scenarios) passes against /mcp/<server> of agentd serve", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path);
  try {
    const { code, output } = await runSuite(
      `http://localhost:${daemon.port}/mcp/conformance`,
      [
        "--suite",
        "all",
      ],
    );
    const { passed, failed } = totals(output);
    assert.equal(failed, 0, output.slice(-4000));
    // 43: quick calls are answered with JSON bodies, so the suite's check that
    // concurrent POST SSE streams work is informational (no SSE to check).
    assert.ok(
      passed >= 43,
      `expected at least 43 checks to pass, got ${passed}`,
    );
    assert.equal(code, 0, output.slice(-4000));
    assert.doesNotMatch(output, /Unexpected failures/);
    for (
      const scenario of [
        "dns-rebinding-protection",
        "server-initialize",
        "json-schema-2020-12",
      ]
    ) {
      assert.match(
        output,
        new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`),
      );
    }
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});

Deno.test("conformance: agentd mcp <server> --port serves /mcp alone", async () => {
  await using dir = await tempDir();
  const daemon = await spawnDaemon([
    "mcp",
    "conformance",
    "--port",
    "0",
    "--data-dir",
    dir.path,
  ]);
  try {
    await passScenarios(`http://localhost:${daemon.port}/mcp`, [
      "server-initialize",
      "tools-call-with-progress",
      "dns-rebinding-protection",
    ]);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});

Deno.test("conformance: server-initialize and dns-rebinding-protection against /mcp/memory", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path);
  try {
    await passScenarios(`http://localhost:${daemon.port}/mcp/memory`, [
      "server-initialize",
      "dns-rebinding-protection",
    ]);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});

Deno.test("conformance: server-initialize and dns-rebinding-protection against the gateway at /mcp", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path);
  try {
    await passScenarios(`http://localhost:${daemon.port}/mcp`, [
      "server-initialize",
      "dns-rebinding-protection",
    ]);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});
