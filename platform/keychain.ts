// The OS keychain behind the Secrets port: Secret Service through
// `secret-tool` (Linux desktops), the login keychain through `security`
// (macOS), DPAPI through FFI (Windows: the key file sealed to the user).
// Each holds the master key as base64 text for an account naming the data
// directory. Absent or locked keychains answer undefined, and the caller
// falls back to the key file.

import { join } from "node:path";
import { decodeBase64, encodeBase64 } from "./base64.ts";
import { lazy } from "./lazy.ts";

export interface KeySlot {
  /** `master-key:<data dir>` */
  account: string;
  dataDir: string;
}

export interface Keychain {
  readonly name: string;
  /** The stored text, or undefined when there is none. */
  read(slot: KeySlot): Promise<string | undefined>;
  /** Stores `secret`; false when the keychain refused. */
  write(slot: KeySlot, secret: string): Promise<boolean>;
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

/**
 * A keychain reached through its command line tool: the secret is what the
 * `lookup` command prints; the `store` command reads it on stdin, never on
 * the command line.
 */
function commandKeychain(
  name: string,
  program: string,
  lookup: (account: string) => string[],
  store: (account: string, secret: string) => [string[], string],
): Keychain {
  return {
    name,
    async read({ account }) {
      const result = await run(program, lookup(account));
      return result?.ok && result.stdout !== "" ? result.stdout : undefined;
    },
    async write({ account }, secret) {
      const result = await run(program, ...store(account, secret));
      return result?.ok ?? false;
    },
  };
}

const secretService = commandKeychain(
  "secret-service",
  "secret-tool",
  (account) => ["lookup", "service", SERVICE, "account", account],
  (account, secret) => [[
    "store",
    "--label=agentd master key",
    "service",
    SERVICE,
    "account",
    account,
  ], secret],
);

const macKeychain = commandKeychain(
  "macos-keychain",
  "security",
  (account) => ["find-generic-password", "-s", SERVICE, "-a", account, "-w"],
  // -w as the last flag without a value makes security prompt on stdin.
  (account, secret) => [
    ["add-generic-password", "-s", SERVICE, "-a", account, "-U", "-w"],
    `${secret}\n${secret}\n`,
  ],
);

/** DATA_BLOB on 64-bit Windows: a u32 length, padding, a pointer. */
function dataBlob(bytes: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const blob = new Uint8Array(16);
  const view = new DataView(blob.buffer);
  view.setUint32(0, bytes.length, true);
  view.setBigUint64(
    8,
    BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(bytes))),
    true,
  );
  return blob;
}

/** Runs CryptProtectData or CryptUnprotectData on `input`; undefined when DPAPI refused. */
async function dpapi(
  operation: "CryptProtectData" | "CryptUnprotectData",
  input: Uint8Array<ArrayBuffer>,
): Promise<Uint8Array | undefined> {
  // FFI code loads on Windows only, when the key is sealed or opened.
  const { CRYPT32_SYMBOLS, CRYPTPROTECT_UI_FORBIDDEN, KERNEL32_SYMBOLS } =
    await lazy<typeof import("../ffi/win32_crypt.ts")>(
      "../ffi/win32_crypt.ts",
      import.meta.url,
    );
  const crypt32 = Deno.dlopen("crypt32.dll", CRYPT32_SYMBOLS);
  const kernel32 = Deno.dlopen("kernel32.dll", KERNEL32_SYMBOLS);
  try {
    const inBlob = dataBlob(input);
    const outBlob = new Uint8Array(16);
    const ok = crypt32.symbols[operation](
      Deno.UnsafePointer.of(inBlob),
      null,
      null,
      null,
      null,
      CRYPTPROTECT_UI_FORBIDDEN,
      Deno.UnsafePointer.of(outBlob),
    );
    if (ok === 0) return undefined;
    const view = new DataView(outBlob.buffer);
    const length = view.getUint32(0, true);
    const pointer = Deno.UnsafePointer.create(view.getBigUint64(8, true));
    if (pointer === null) return undefined;
    const output = new Uint8Array(
      new Deno.UnsafePointerView(pointer).getArrayBuffer(length).slice(0),
    );
    kernel32.symbols.LocalFree(pointer);
    return output;
  } finally {
    crypt32.close();
    kernel32.close();
  }
}

/** The key sealed to the Windows user with DPAPI, in `<data dir>/secret.key.dpapi`. */
const windowsDpapi: Keychain = {
  name: "windows-dpapi",
  async read({ dataDir }) {
    let sealed: string;
    try {
      sealed = await Deno.readTextFile(join(dataDir, "secret.key.dpapi"));
    } catch {
      return undefined;
    }
    const opened = await dpapi(
      "CryptUnprotectData",
      decodeBase64(sealed.trim()),
    );
    return opened === undefined ? undefined : new TextDecoder().decode(opened);
  },
  async write({ dataDir }, secret) {
    const sealed = await dpapi(
      "CryptProtectData",
      new TextEncoder().encode(secret),
    );
    if (sealed === undefined) return false;
    await Deno.mkdir(dataDir, { recursive: true });
    await Deno.writeTextFile(
      join(dataDir, "secret.key.dpapi"),
      encodeBase64(sealed) + "\n",
      { createNew: true },
    );
    return true;
  },
};

/** The keychain of this OS when one is reachable now, else undefined. */
export async function findKeychain(
  env: Record<string, string | undefined>,
): Promise<Keychain | undefined> {
  if (Deno.build.os === "darwin") return macKeychain;
  if (Deno.build.os === "windows") return windowsDpapi;
  if (Deno.build.os === "linux") {
    // Secret Service lives on the session bus; without one secret-tool hangs or fails.
    if (!env.DBUS_SESSION_BUS_ADDRESS) return undefined;
    const probe = await run("secret-tool", ["--version"]);
    return probe === undefined ? undefined : secretService;
  }
  return undefined;
}
