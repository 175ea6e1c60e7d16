// `agentd service install|uninstall|status` as a user meets it: the files it
// writes, the systemctl/launchctl commands it runs (fake ones first on PATH
// log their argv), its exit codes, and a daemon started from the unit's own
// ExecStart answering `status`.

import assert from "node:assert/strict";
import { join } from "node:path";
import { FIXTURE_CLI, freePort, runCli, tempDir, waitFor } from "../helpers.ts";
import {
  agentdCommand,
  readServiceCommand,
  serviceFilePath,
  splitSystemdCommand,
  systemdQuote,
} from "../../platform/service_files.ts";

const SECRET = "s3cret-token-value-0123456789";
const RUN_FLAGS = [
  "run",
  "-A",
  "--unstable-kv",
  "--unstable-no-legacy-abort",
  "--v8-flags=--max-semi-space-size=1",
];

// A fake systemctl/launchctl: logs its argv; FAKE_ACTIVE makes the service
// look enabled and running; FAKE_EXIT fails every other command.
const FAKE = `#!/bin/sh
echo "$(basename "$0") $*" >> "$FAKE_LOG"
case "$*" in
  *is-enabled*) if [ -n "$FAKE_ACTIVE" ]; then echo enabled; exit 0; fi; echo disabled; exit 1 ;;
  *is-active*) if [ -n "$FAKE_ACTIVE" ]; then echo active; exit 0; fi; echo inactive; exit 3 ;;
  print*) if [ -n "$FAKE_ACTIVE" ]; then printf 'dev.agentd = {\\n\\tstate = running\\n\\tpid = 4242\\n}\\n'; exit 0; fi
    echo "Could not find service" >&2; exit 113 ;;
esac
if [ -n "$FAKE_EXIT" ]; then echo "Failed to connect to bus: No medium found" >&2; exit "$FAKE_EXIT"; fi
exit 0
`;

let denoDir: Promise<string> | undefined;

/** The test's own deno cache, so a child with another HOME needs no downloads. */
function sharedDenoDir(): Promise<string> {
  denoDir ??= (async () => {
    const fromEnv = Deno.env.get("DENO_DIR");
    if (fromEnv) return fromEnv;
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json"],
      stdout: "piped",
      stderr: "null",
    }).output();
    const info: unknown = JSON.parse(new TextDecoder().decode(output.stdout));
    if (
      typeof info === "object" && info !== null && "denoDir" in info &&
      typeof info.denoDir === "string"
    ) return info.denoDir;
    throw new Error("deno info --json did not name denoDir");
  })();
  return denoDir;
}

interface Sandbox {
  root: string;
  home: string;
  unitFile: string;
  plistFile: string;
  log: string;
  env: Record<string, string>;
  /** Runs `agentd service <args>` with this sandbox's env plus `extra`. */
  service(
    args: string[],
    extra?: Record<string, string>,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The fake commands' log lines, then clears it. */
  calls(): Promise<string[]>;
}

async function sandbox(root: string): Promise<Sandbox> {
  const bin = join(root, "bin");
  const home = join(root, "home");
  const log = join(root, "calls.log");
  await Deno.mkdir(bin, { recursive: true });
  await Deno.mkdir(home, { recursive: true });
  for (const name of ["systemctl", "launchctl"]) {
    await Deno.writeTextFile(join(bin, name), FAKE, { mode: 0o755 });
  }
  const env = {
    PATH: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    HOME: home,
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_DATA_HOME: join(root, "data"),
    DENO_DIR: await sharedDenoDir(),
    FAKE_LOG: log,
    AGENTD_SERVICE_PLATFORM: "linux",
  };
  return {
    root,
    home,
    unitFile: join(root, "config", "systemd", "user", "agentd.service"),
    plistFile: join(home, "Library", "LaunchAgents", "dev.agentd.plist"),
    log,
    env,
    service: (args, extra = {}) =>
      runCli(["service", ...args], { ...env, ...extra }),
    async calls() {
      const text = await Deno.readTextFile(log).catch(() => "");
      await Deno.remove(log).catch(() => {});
      return text.split("\n").filter((line) => line !== "");
    },
  };
}

/** `Key=value` lines of a unit file (comments and sections dropped). */
function unitEntries(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of text.split("\n")) {
    const match = line.match(/^([A-Za-z]+)=(.*)$/);
    if (match?.[1] !== undefined && match[2] !== undefined) {
      entries.set(match[1], match[2]);
    }
  }
  return entries;
}

function execStart(text: string): string[] {
  return splitSystemdCommand(unitEntries(text).get("ExecStart") ?? "");
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("service: install writes a systemd unit that runs this agentd serve with the flags, no secrets", async () => {
  await using dir = await tempDir();
  const box = await sandbox(dir.path);
  const envFile = join(dir.path, "agentd.env");
  await Deno.writeTextFile(
    envFile,
    `AGENTD_TOKEN=${SECRET}\nOPENAI_API_KEY=sk-${SECRET}\n`,
    { mode: 0o600 },
  );
  const dataDir = join(dir.path, "data dir");
  const result = await box.service([
    "install",
    "--port",
    "9931",
    "--host",
    "127.0.0.1",
    "--servers",
    "memory,gateway",
    "--data-dir",
    dataDir,
    "--log-level",
    "debug",
    "--env-file",
    envFile,
  ], { AGENTD_TOKEN: SECRET, OPENAI_API_KEY: `sk-${SECRET}` });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, new RegExp(`Wrote ${box.unitFile}`));
  assert.match(result.stdout, /journalctl --user -u agentd\.service/);

  const text = await Deno.readTextFile(box.unitFile);
  assert.ok(!text.includes(SECRET), "the unit holds no secret value");
  const entries = unitEntries(text);
  assert.deepEqual(execStart(text), [
    Deno.execPath(),
    ...RUN_FLAGS,
    FIXTURE_CLI,
    "serve",
    "--host",
    "127.0.0.1",
    "--port",
    "9931",
    "--servers",
    "memory,gateway",
    "--data-dir",
    dataDir,
    "--log-level",
    "debug",
  ]);
  assert.equal(entries.get("EnvironmentFile"), envFile);
  assert.equal(entries.get("Restart"), "on-failure");
  assert.equal(entries.get("RestartSec"), "2");
  assert.equal(entries.get("WantedBy"), "default.target");
  assert.ok(!result.stdout.includes(SECRET) && !result.stderr.includes(SECRET));

  assert.deepEqual(await box.calls(), [
    "systemctl --user daemon-reload",
    "systemctl --user enable --now agentd.service",
  ]);
});

Deno.test("service: --no-start only writes; re-install replaces the unit and restarts", async () => {
  await using dir = await tempDir();
  const box = await sandbox(dir.path);
  const first = await box.service(["install", "--no-start", "--port", "9932"], {
    AGENTD_TOKEN: SECRET,
  });
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(await box.calls(), [], "--no-start runs no systemctl");
  assert.match(first.stdout, /systemctl --user enable --now agentd\.service/);
  assert.match(first.stdout, /does not see this shell's AGENTD_TOKEN/);
  assert.ok(!(await Deno.readTextFile(box.unitFile)).includes(SECRET));

  const second = await box.service(["install", "--port", "9933"]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /Replaced .*agentd\.service/);
  const command = execStart(await Deno.readTextFile(box.unitFile));
  assert.deepEqual(command.slice(-3), ["serve", "--port", "9933"]);
  assert.ok(!command.includes("9932"));
  assert.deepEqual(await box.calls(), [
    "systemctl --user daemon-reload",
    "systemctl --user enable --now agentd.service",
    "systemctl --user restart agentd.service",
  ]);
});

Deno.test("service: bad flags and actions exit 2 naming them, and write nothing", async () => {
  await using dir = await tempDir();
  const box = await sandbox(dir.path);
  const cases: [string[], RegExp][] = [
    [[], /which action\? install, uninstall or status/],
    [["restart"], /unknown action "restart"/],
    [
      ["install", "--frobnicate"],
      /unknown flag --frobnicate for "agentd service install"/,
    ],
    [["install", "--port", "http"], /flag port: expected an integer/],
    [["install", "--port"], /flag --port needs a value/],
    [["install", "--servers", "nope"], /unknown server "nope"/],
    [
      ["install", "--env-file", join(dir.path, "missing.env")],
      /flag --env-file: .*missing\.env: not found/,
    ],
    [
      ["install", "--store", "postgres://agentd:pw-1234@db:5432/agentd"],
      /--store carries a password.*AGENTD_STORE=postgres/,
    ],
    [["install", "extra"], /unexpected argument "extra"/],
    [
      ["status", "--port", "1"],
      /unknown flag --port for "agentd service status"/,
    ],
  ];
  for (const [args, message] of cases) {
    const result = await box.service(args);
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.match(result.stderr, /agentd service --help/);
  }
  assert.equal(await exists(box.unitFile), false);
  assert.deepEqual(await box.calls(), []);

  const help = await box.service(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--env-file FILE/);
  assert.match(
    help.stdout,
    /status: 0 running \(.*\/health answers.*\),\s+3 installed but not running, 4 not installed/s,
  );
});

Deno.test("service: a failing or missing systemctl exits 1 saying what to do", async () => {
  await using dir = await tempDir();
  const box = await sandbox(dir.path);
  const failed = await box.service(["install"], { FAKE_EXIT: "1" });
  assert.equal(failed.code, 1);
  assert.match(
    failed.stderr,
    /systemctl --user daemon-reload failed: Failed to connect to bus.*loginctl enable-linger.*--no-start/s,
  );
  assert.ok(await exists(box.unitFile), "the unit stays for a later start");

  const bare = join(dir.path, "empty-bin");
  await Deno.mkdir(bare);
  const missing = await box.service(["install"], { PATH: bare });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /systemctl not found on PATH/);
});

Deno.test("service: uninstall disables and removes, and is fine when not installed", async () => {
  await using dir = await tempDir();
  const box = await sandbox(dir.path);
  const none = await box.service(["uninstall"]);
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /not installed/);
  assert.deepEqual(await box.calls(), []);

  assert.equal((await box.service(["install", "--no-start"])).code, 0);
  const removed = await box.service(["uninstall"]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, new RegExp(`Removed ${box.unitFile}`));
  assert.equal(await exists(box.unitFile), false);
  assert.deepEqual(await box.calls(), [
    "systemctl --user disable --now agentd.service",
    "systemctl --user daemon-reload",
  ]);
});

Deno.test("service: status exits 4 not installed, 3 stopped, 0 when the unit's own command serves", async () => {
  await using dir = await tempDir();
  const box = await sandbox(dir.path);
  const absent = await box.service(["status"]);
  assert.equal(absent.code, 4, absent.stderr);
  assert.match(absent.stdout, /installed: no/);

  const port = freePort();
  const dataDir = join(dir.path, "daemon-data");
  assert.equal(
    (await box.service([
      "install",
      "--no-start",
      "--port",
      String(port),
      "--data-dir",
      dataDir,
    ])).code,
    0,
  );
  const stopped = await box.service(["status"]);
  assert.equal(stopped.code, 3, stopped.stdout + stopped.stderr);
  assert.match(stopped.stdout, /active:\s+inactive/);
  assert.match(
    stopped.stdout,
    new RegExp(`127\\.0\\.0\\.1:${port}/health: nothing answers`),
  );
  assert.deepEqual(await box.calls(), [
    "systemctl --user is-enabled agentd.service",
    "systemctl --user is-active agentd.service",
  ]);

  // Start exactly what systemd would: the unit's ExecStart.
  const [program = "", ...args] = execStart(
    await Deno.readTextFile(box.unitFile),
  );
  const daemon = new Deno.Command(program, {
    args,
    env: { DENO_DIR: box.env.DENO_DIR ?? "", NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await waitFor(
      () =>
        fetch(`http://127.0.0.1:${port}/health`).then(
          async (response) => (await response.body?.cancel(), response.ok),
          () => false,
        ),
      (ok) => ok,
      30_000,
    );
    const running = await box.service(["status"], { FAKE_ACTIVE: "1" });
    assert.equal(running.code, 0, running.stdout + running.stderr);
    assert.match(running.stdout, /enabled:\s+enabled/);
    assert.match(running.stdout, /active:\s+active/);
    assert.match(
      running.stdout,
      /health:.*: (ok|degraded), agentd \d+\.\d+\.\d+, up \d+s; servers: .*memory (running|not_loaded)/,
    );

    // The manager says inactive but an agentd answers on the unit's port: still 0, with a note.
    const answering = await box.service(["status"]);
    assert.equal(answering.code, 0);
    assert.match(answering.stdout, /does not report it active/);
  } finally {
    daemon.kill("SIGTERM");
    assert.equal((await daemon.status).code, 0);
  }
});

Deno.test("service: launchd writes a plist agent and uses bootstrap/bootout", async () => {
  await using dir = await tempDir();
  const box = await sandbox(dir.path);
  const darwin = { AGENTD_SERVICE_PLATFORM: "darwin" };
  const dataDir = join(dir.path, "mac-data");
  const installed = await box.service(
    ["install", "--port", "9934", "--data-dir", dataDir],
    { ...darwin, AGENTD_TOKEN: SECRET },
  );
  assert.equal(installed.code, 0, installed.stderr);
  const uid = Deno.uid();
  assert.deepEqual(await box.calls(), [
    "launchctl print gui/" + uid + "/dev.agentd",
    `launchctl bootstrap gui/${uid} ${box.plistFile}`,
  ]);
  const plist = await Deno.readTextFile(box.plistFile);
  assert.ok(!plist.includes(SECRET));
  assert.match(plist, /^<\?xml version="1\.0"/);
  assert.match(plist, /<key>Label<\/key>\s*<string>dev\.agentd<\/string>/);
  assert.match(
    plist,
    /<key>KeepAlive<\/key>\s*<dict>\s*<key>SuccessfulExit<\/key>\s*<false\/>\s*<\/dict>/,
  );
  assert.match(plist, /<key>RunAtLoad<\/key>\s*<true\/>/);
  const log = join(dataDir, "logs", "agentd.log");
  assert.match(
    plist,
    new RegExp(`<key>StandardErrorPath</key>\\s*<string>${log}</string>`),
  );
  assert.ok(await exists(join(dataDir, "logs")), "launchd needs the log dir");
  assert.deepEqual(readServiceCommand("launchd", plist), [
    Deno.execPath(),
    ...RUN_FLAGS,
    FIXTURE_CLI,
    "serve",
    "--port",
    "9934",
    "--data-dir",
    dataDir,
  ]);
  assert.match(installed.stdout, new RegExp(`tail -f ${log}`));

  // Loaded already: re-install boots the old one out first; --env-file goes through /bin/sh.
  const envFile = join(dir.path, "mac.env");
  await Deno.writeTextFile(envFile, `AGENTD_TOKEN=${SECRET}\n`, {
    mode: 0o600,
  });
  const again = await box.service(
    ["install", "--env-file", envFile, "--data-dir", dataDir],
    { ...darwin, FAKE_ACTIVE: "1" },
  );
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /Replaced/);
  assert.deepEqual(await box.calls(), [
    `launchctl print gui/${uid}/dev.agentd`,
    `launchctl bootout gui/${uid}/dev.agentd`,
    `launchctl bootstrap gui/${uid} ${box.plistFile}`,
  ]);
  const wrapped = readServiceCommand(
    "launchd",
    await Deno.readTextFile(box.plistFile),
  ) ?? [];
  assert.deepEqual(wrapped.slice(0, 2), ["/bin/sh", "-c"]);
  assert.equal(wrapped[3], envFile);
  assert.equal(wrapped[4], Deno.execPath());

  const status = await box.service(["status"], { ...darwin, FAKE_ACTIVE: "1" });
  assert.equal(status.code, 0, status.stdout);
  assert.match(status.stdout, /state:\s+running \(pid 4242\)/);
  const notLoaded = await box.service(["status"], darwin);
  assert.equal(notLoaded.code, 3, notLoaded.stdout);
  await box.calls();

  const removed = await box.service(["uninstall"], darwin);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(await exists(box.plistFile), false);
  assert.deepEqual(await box.calls(), [
    `launchctl bootout gui/${uid}/dev.agentd`,
  ]);
  assert.equal((await box.service(["status"], darwin)).code, 4);
});

Deno.test("service: Windows is not supported yet and says what to do instead", async () => {
  await using dir = await tempDir();
  const box = await sandbox(dir.path);
  const result = await box.service(["install"], {
    AGENTD_SERVICE_PLATFORM: "windows",
  });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /not supported on Windows yet/);
  assert.match(result.stderr, /Task Scheduler/);
  assert.match(result.stderr, /agentd serve/);
});

Deno.test("service files: the command, quoting and the unit directory", () => {
  assert.deepEqual(
    agentdCommand({
      standalone: true,
      execPath: "/usr/local/bin/agentd",
      mainModule: "file:///tmp/deno-compile-agentd/main.ts",
    }),
    ["/usr/local/bin/agentd"],
  );
  assert.deepEqual(
    agentdCommand({
      standalone: false,
      execPath: "/usr/bin/deno",
      mainModule: "file:///home/me/agentd/main.ts",
    }),
    ["/usr/bin/deno", ...RUN_FLAGS, "/home/me/agentd/main.ts"],
  );

  const words = [
    "/opt/my apps/agentd",
    '"q"',
    "100%",
    "$HOME",
    "a\\b",
    "plain",
  ];
  const line = words.map(systemdQuote).join(" ");
  assert.equal(systemdQuote("plain"), "plain");
  assert.equal(systemdQuote("100%"), "100%%");
  assert.equal(systemdQuote("$HOME"), '"$$HOME"');
  assert.deepEqual(splitSystemdCommand(line), words);

  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(
    serviceFilePath("systemd", env({ HOME: "/h", XDG_CONFIG_HOME: "rel" })),
    "/h/.config/systemd/user/agentd.service",
  );
  assert.equal(
    serviceFilePath("systemd", env({ HOME: "/h", XDG_CONFIG_HOME: "/x" })),
    "/x/systemd/user/agentd.service",
  );
  assert.equal(
    serviceFilePath("launchd", env({ HOME: "/h" })),
    "/h/Library/LaunchAgents/dev.agentd.plist",
  );
  assert.throws(() => serviceFilePath("launchd", env({})), /HOME is not set/);
});
