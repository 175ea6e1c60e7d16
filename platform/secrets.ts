// The Secrets port: the master key for data encrypted at rest. From
// AGENTD_SECRET_KEY, the OS keychain (when asked and present), or a key
// file (0600) created on first use.

import { dirname, join } from "node:path";
import { decodeBase64, encodeBase64 } from "./base64.ts";
import { messageOf } from "./errors.ts";
import { findKeychain } from "./keychain.ts";

export interface Secrets {
  /** Where the key came from, for /health and doctor (never the key). */
  readonly source: string;
  /** AES-256-GCM key for values encrypted at rest. */
  readonly dataKey: CryptoKey;
}

export class SecretsError extends Error {
  override name = "SecretsError";
}

const KEY_BYTES = 32;
const ENVELOPE = "enc:v1:";

/**
 * AGENTD_SECRET_KEY (base64 or hex of 32 bytes) wins; then, with
 * `keychain`, a key already in the OS keychain; then `<dataDir>/secret.key`
 * when it exists; then a new key in the keychain; else a new key file
 * (0600). Whichever held the key first keeps holding it.
 */
export async function openSecrets(options: {
  env: Record<string, string | undefined>;
  dataDir: string;
  keychain?: boolean;
}): Promise<Secrets> {
  const fromEnv = options.env.AGENTD_SECRET_KEY;
  if (fromEnv) {
    return {
      source: "AGENTD_SECRET_KEY",
      dataKey: await importKey(decodeKey(fromEnv, "AGENTD_SECRET_KEY")),
    };
  }
  const path = join(options.dataDir, "secret.key");
  if (options.keychain) {
    const keychain = await findKeychain(options.env);
    if (keychain) {
      const slot = {
        account: `master-key:${options.dataDir}`,
        dataDir: options.dataDir,
      };
      const source =
        `${keychain.name} (service agentd, account ${slot.account})`;
      const stored = await keychain.read(slot);
      if (stored !== undefined) {
        return { source, dataKey: await importKey(decodeKey(stored, source)) };
      }
      // A key file from before keeps its data readable; else the key starts in the keychain.
      const fileExists = await Deno.stat(path).then(() => true, () => false);
      if (!fileExists) {
        const key = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
        if (await keychain.write(slot, encodeBase64(key))) {
          return { source, dataKey: await importKey(key) };
        }
      }
    }
  }
  return {
    source: path,
    dataKey: await importKey(await readOrCreateKeyFile(path)),
  };
}

async function readOrCreateKeyFile(
  path: string,
): Promise<Uint8Array<ArrayBuffer>> {
  try {
    const text = await Deno.readTextFile(path);
    if (Deno.build.os !== "windows") {
      const mode = (await Deno.stat(path)).mode ?? 0;
      // A key others can read is no key: tighten it rather than refuse to start.
      if ((mode & 0o077) !== 0) await Deno.chmod(path, 0o600);
    }
    return decodeKey(text.trim(), path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      if (error instanceof SecretsError) throw error;
      throw new SecretsError(
        `Cannot read the secret key file ${path}: ${messageOf(error)}`,
      );
    }
  }
  const key = crypto.getRandomValues(new Uint8Array(KEY_BYTES));
  await Deno.mkdir(dirname(path), { recursive: true });
  // Written whole to a private temp file, then hard-linked into place: the
  // link is atomic and fails when the key exists, so two servers or processes
  // starting at once neither overwrite each other's key nor read a half file.
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(temp, encodeBase64(key) + "\n", {
      createNew: true,
      mode: 0o600,
    });
    await Deno.link(temp, path);
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) {
      return await readOrCreateKeyFile(path);
    }
    throw new SecretsError(
      `Cannot create the secret key file ${path}: ${messageOf(error)}`,
    );
  } finally {
    await Deno.remove(temp).catch(() => {});
  }
  return key;
}

function decodeKey(text: string, source: string): Uint8Array<ArrayBuffer> {
  const trimmed = text.trim();
  let bytes: Uint8Array<ArrayBuffer> | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) {
    bytes = new Uint8Array(
      trimmed.match(/../g)?.map((pair) => parseInt(pair, 16)) ?? [],
    );
  } else {
    try {
      bytes = decodeBase64(trimmed);
    } catch {
      bytes = undefined;
    }
  }
  if (!bytes || bytes.length !== KEY_BYTES) {
    throw new SecretsError(
      `The secret key from ${source} is not 32 bytes in base64 or hex; ` +
        `generate one with: openssl rand -base64 32`,
    );
  }
  return bytes;
}

function importKey(bytes: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", bytes, { name: "AES-GCM" }, false, [
    "encrypt",
    "decrypt",
  ]);
}

/**
 * Encrypts with AES-256-GCM under a fresh 96-bit IV. `context` (e.g. the
 * entry's namespace and key) is bound as associated data, so a ciphertext
 * moved to another entry fails to decrypt.
 */
export async function encrypt(
  key: CryptoKey,
  plaintext: string,
  context: string,
): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(context) },
    key,
    new TextEncoder().encode(plaintext),
  );
  return `${ENVELOPE}${encodeBase64(iv)}:${
    encodeBase64(new Uint8Array(ciphertext))
  }`;
}

export function isEncrypted(value: string): boolean {
  return value.startsWith(ENVELOPE);
}

export async function decrypt(
  key: CryptoKey,
  envelope: string,
  context: string,
): Promise<string> {
  const [iv, ciphertext] = envelope.slice(ENVELOPE.length).split(":");
  if (!isEncrypted(envelope) || iv === undefined || ciphertext === undefined) {
    throw new SecretsError("Not an encrypted value");
  }
  try {
    const plaintext = await crypto.subtle.decrypt(
      {
        name: "AES-GCM",
        iv: decodeBase64(iv),
        additionalData: new TextEncoder().encode(context),
      },
      key,
      decodeBase64(ciphertext),
    );
    return new TextDecoder().decode(plaintext);
  } catch {
    throw new SecretsError(
      "Cannot decrypt a sensitive value: the secret key differs from the one it was written with",
    );
  }
}
