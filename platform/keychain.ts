// The OS keychain behind the Secrets port: Secret Service through
// `secret-tool` (Linux desktops), the login keychain through `security`
// (macOS). Each holds the master key as base64 text under service "agentd"
// and an account naming the data directory. Absent or locked keychains
// answer undefined, and the caller falls back to the key file.

export interface Keychain {
  readonly name: string;
  /** The stored text, or undefined when there is none. */
  read(account: string): Promise<string | undefined>;
  /** Stores `secret`; false when the keychain refused. */
  write(account: string, secret: string): Promise<boolean>;
}

const SERVICE = "agentd";

async function run(
  program: string,
  args: string[],
  stdin?: string,
): Promise<{ ok: boolean; stdout: string } | undefined> {
  try {
    const child = new Deno.Command(program, {
      args,
      stdin: stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    if (stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(stdin));
      await writer.close();
    }
    const output = await child.output();
    return {
      ok: output.success,
      stdout: new TextDecoder().decode(output.stdout).trim(),
    };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}

const secretService: Keychain = {
  name: "secret-service",
  async read(account) {
    const result = await run("secret-tool", [
      "lookup",
      "service",
      SERVICE,
      "account",
      account,
    ]);
    return result?.ok && result.stdout !== "" ? result.stdout : undefined;
  },
  async write(account, secret) {
    // The secret goes on stdin, never on the command line.
    const result = await run("secret-tool", [
      "store",
      "--label=agentd master key",
      "service",
      SERVICE,
      "account",
      account,
    ], secret);
    return result?.ok ?? false;
  },
};

const macKeychain: Keychain = {
  name: "macos-keychain",
  async read(account) {
    const result = await run("security", [
      "find-generic-password",
      "-s",
      SERVICE,
      "-a",
      account,
      "-w",
    ]);
    return result?.ok && result.stdout !== "" ? result.stdout : undefined;
  },
  async write(account, secret) {
    // -w as the last flag without a value makes security prompt on stdin.
    const result = await run("security", [
      "add-generic-password",
      "-s",
      SERVICE,
      "-a",
      account,
      "-U",
      "-w",
    ], `${secret}\n${secret}\n`);
    return result?.ok ?? false;
  },
};

/** The keychain of this OS when one is reachable now, else undefined. */
export async function findKeychain(
  env: Record<string, string | undefined>,
): Promise<Keychain | undefined> {
  if (Deno.build.os === "darwin") return macKeychain;
  if (Deno.build.os === "linux") {
    // Secret Service lives on the session bus; without one secret-tool hangs or fails.
    if (!env.DBUS_SESSION_BUS_ADDRESS) return undefined;
    const probe = await run("secret-tool", ["--version"]);
    return probe === undefined ? undefined : secretService;
  }
  return undefined;
}
