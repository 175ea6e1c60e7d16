// The CLI as users meet it: help, version, usage errors (exit 2 naming the
// word), config precedence (file < env < flags), doctor, and `deno task start`.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  assertRunningExceptDisplay,
  freePort,
  ROOT,
  runCli,
  spawnDaemon,
  tempDir,
} from "./helpers.ts";

Deno.test("cli: --help and --version", async () => {
  const help = await runCli(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage:\n {2}agentd serve/);
  assert.match(help.stdout, /memory\s+built/);
  assert.match(help.stdout, /gateway\s+built/);
  assert.match(help.stdout, /browser-automation\s+built/);
  assert.match(help.stdout, /platform-auth\s+built/);
  assert.equal(help.stderr, "");

  const version = await runCli(["--version"]);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^agentd \d+\.\d+\.\d+\n$/);

  const serveHelp = await runCli(["serve", "--help"]);
  assert.equal(serveHelp.code, 0);
  assert.match(serveHelp.stdout, /--data-dir DIR/);

  const mcpHelp = await runCli(["mcp", "conformance", "--help"]);
  assert.equal(mcpHelp.code, 0);
  assert.match(mcpHelp.stdout, /conformance\s+Conformance fixture/);
});

Deno.test("cli: unknown commands, flags and servers exit 2 naming them", async () => {
  const cases: [string[], RegExp][] = [
    [["frobnicate"], /unknown command "frobnicate"/],
    [["--frobnicate"], /unknown flag --frobnicate/],
    [["serve", "--frobnicate"], /unknown flag --frobnicate for "agentd serve"/],
    [["serve", "extra"], /unexpected argument "extra"/],
    [["serve", "--port"], /flag --port needs a value/],
    [
      ["serve", "--port", "http"],
      /flag port: expected an integer from 0 to 65535/,
    ],
    [
      ["serve", "--servers", "nope"],
      /unknown server "nope" in servers; built: gateway, browser-automation, extension-bridge, in-page, desktop-control, memory, platform-auth, conformance/,
    ],
    [["mcp"], /which server\?/],
    [
      ["mcp", "nope"],
      /unknown server "nope"; built: gateway, browser-automation, extension-bridge, in-page, desktop-control, memory, platform-auth, conformance/,
    ],
    [
      ["mcp", "conformance", "--cdp-port", "9335"],
      /unknown flag --cdp-port for "agentd mcp conformance"/,
    ],
    [
      ["doctor", "--frobnicate"],
      /unknown flag --frobnicate for "agentd doctor"/,
    ],
    [
      ["native-host", "install", "--browser", "netscape"],
      /unknown browser "netscape" for --browser/,
    ],
    [["native-host", "stray"], /unexpected argument "stray"/],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(args);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(" "));
    assert.match(result.stderr, /Run "agentd .*--help" for usage\./);
    assert.equal(result.stdout, "");
  }
});

Deno.test("cli: a bad config file or env value exits 1 naming where it came from", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "agentd.json");
  await Deno.writeTextFile(file, JSON.stringify({ port: 8765, bogus: true }));
  const unknownKey = await runCli([
    "serve",
    "--config",
    file,
    "--data-dir",
    dir.path,
  ]);
  assert.equal(unknownKey.code, 1);
  assert.match(unknownKey.stderr, new RegExp(`file ${file} bogus`));

  await Deno.writeTextFile(file, "{ not json");
  const invalid = await runCli([
    "serve",
    "--config",
    file,
    "--data-dir",
    dir.path,
  ]);
  assert.equal(invalid.code, 1);
  assert.match(invalid.stderr, /invalid JSON/);

  const missing = await runCli([
    "serve",
    "--config",
    join(dir.path, "absent.json"),
  ]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /absent\.json: not found/);

  const env = await runCli(["serve", "--data-dir", dir.path], {
    AGENTD_PORT: "eighty",
  });
  assert.equal(env.code, 1);
  assert.match(env.stderr, /env AGENTD_PORT: expected an integer/);
});

Deno.test("cli: config precedence is file < env < flag", async () => {
  await using dir = await tempDir();
  const [filePort, envPort, flagPort] = [freePort(), freePort(), freePort()];
  const file = join(dir.path, "agentd.json");
  await Deno.writeTextFile(
    file,
    JSON.stringify({ port: filePort, data_dir: dir.path }),
  );

  async function listeningPort(
    args: string[],
    env: Record<string, string>,
  ): Promise<number> {
    const daemon = await spawnDaemon(["serve", "--config", file, ...args], {
      env,
    });
    const status = await daemon.stop();
    assert.equal(status.code, 0);
    return daemon.port;
  }
  assert.equal(await listeningPort([], {}), filePort);
  assert.equal(
    await listeningPort([], { AGENTD_PORT: String(envPort) }),
    envPort,
  );
  assert.equal(
    await listeningPort(["--port", String(flagPort)], {
      AGENTD_PORT: String(envPort),
    }),
    flagPort,
  );
  // The config file may also come from AGENTD_CONFIG.
  const viaEnv = await spawnDaemon(["serve"], { env: { AGENTD_CONFIG: file } });
  assert.equal((await viaEnv.stop()).code, 0);
  assert.equal(viaEnv.port, filePort);
});

Deno.test("cli: doctor reports the store and exits 0 on a healthy data dir", async () => {
  await using dir = await tempDir();
  const result = await runCli(["doctor", "--data-dir", dir.path], {
    PATH: Deno.env.get("PATH") ?? "",
  });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    /ok\s+store\s+.*store\.kv opens, writes and reads/,
  );
  assert.match(result.stdout, /(ok|warn)\s+browser/);

  // Model providers: usable ones are named; a key is never printed.
  const key = "sk-doctor-secret-0123456789";
  const withKey = await runCli(["doctor", "--data-dir", dir.path], {
    OPENAI_API_KEY: key,
  });
  assert.match(withKey.stdout, /ok\s+models\s+agents can use .*openai/);
  assert.ok(!withKey.stdout.includes(key) && !withKey.stderr.includes(key));

  const file = join(dir.path, "not-a-dir");
  await Deno.writeTextFile(file, "");
  const broken = await runCli(["doctor", "--data-dir", file]);
  assert.equal(broken.code, 1);
  assert.match(broken.stdout, /FAIL store/);
  assert.match(broken.stdout, /fix: make .* writable, or pass --data-dir DIR/);
});

Deno.test("cli: `deno task start` runs `agentd serve` and passes flags through", async () => {
  await using dir = await tempDir();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "start", "--port", "0", "--data-dir", dir.path],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let port = 0;
  let text = "";
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  try {
    while (port === 0) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
      port = Number(
        text.match(/"event":"listening".*?"port":(\d+)/)?.[1] ?? 0,
      );
    }
    assert.ok(port > 0, text);
    const health = await (await fetch(`http://127.0.0.1:${port}/health`))
      .json();
    assertRunningExceptDisplay(health);
    assert.deepEqual(
      Object.keys(health.servers),
      [
        "gateway",
        "browser-automation",
        "extension-bridge",
        "in-page",
        "desktop-control",
        "memory",
        "platform-auth",
      ],
      "the built servers, and only those, are listed",
    );
  } finally {
    // Also when an assertion failed: a daemon left running outlives the test.
    child.kill("SIGTERM");
    await reader.cancel();
  }
  assert.equal((await child.status).code, 0);
});
