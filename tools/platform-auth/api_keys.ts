// api_key platforms: a stored key is checked with a configured probe
// request; any 2xx means the platform accepts it.

import { messageOf } from "../../platform/errors.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { ToolError } from "../kit/mod.ts";
import type { ApiKeyProbe } from "./config.ts";
import type { PlatformAuth } from "./service.ts";
import type { PlatformRecord } from "./vault.ts";
import type { z } from "zod";

/**
 * Checks the stored key with the platform's probe: active when it passes;
 * otherwise why not (no key yet, or the probe's refusal), for the caller to
 * ask the person for a key.
 */
export async function probeStoredKey(
  auth: PlatformAuth,
  record: PlatformRecord,
): Promise<
  { ok: true; view: { [key: string]: JsonValue } } | {
    ok: false;
    reason: string;
  }
> {
  const sealed = record.sealed.api_key;
  if (sealed === undefined) {
    return {
      ok: false,
      reason: `Platform "${record.name}" has no API key yet`,
    };
  }
  const key = await auth.vault.unseal(record.name, "api_key", sealed);
  const probe = await runProbe(record, key);
  if (!probe.ok) {
    await auth.setStatus(
      record,
      "auth_required",
      `probe answered ${probe.status}`,
    );
    auth.audit(record.name, "probe", "rejected", {
      status: probe.status,
    });
    return {
      ok: false,
      reason:
        `The API key of "${record.name}" was refused by its probe (${probe.detail})`,
    };
  }
  await auth.setStatus(record, "active");
  auth.audit(record.name, "probe", "ok", { status: probe.status });
  return {
    ok: true,
    view: {
      platform: record.name,
      method: "api_key",
      status: "active",
      probe_status: probe.status,
    },
  };
}

/**
 * A key the person entered in the daemon's page: probed, then sealed into
 * the platform's record (active) only if the platform accepts it. The key
 * goes nowhere else: the verdict names the probe's answer, never the key.
 */
export async function saveEnteredKey(
  auth: PlatformAuth,
  platform: string,
  key: string,
): Promise<{ ok: boolean; message: string }> {
  const record = await auth.require(platform);
  if (record.grant !== "api_key") {
    return {
      ok: false,
      message: `"${platform}" is no longer an api_key platform.`,
    };
  }
  const probe = await runProbe(record, key);
  if (!probe.ok) {
    auth.audit(platform, "probe", "rejected", {
      status: probe.status,
      source: "page",
    });
    return {
      ok: false,
      message:
        `The platform refused this key (${probe.detail}). Check it and enter it again.`,
    };
  }
  const saved = await auth.lock(platform).run(async () => {
    const current = await auth.vault.platform(platform);
    // Replaced or removed while the probe ran: this key was checked against another.
    if (
      current?.grant !== "api_key" ||
      current.settings.api_key_probe?.url !== record.settings.api_key_probe?.url
    ) {
      return false;
    }
    await auth.vault.putPlatform({
      ...current,
      sealed: {
        ...current.sealed,
        api_key: await auth.vault.seal(platform, "api_key", key),
      },
      status: "active",
      status_reason: undefined,
      updated_at: auth.clock.now(),
    });
    return true;
  });
  if (!saved) {
    return {
      ok: false,
      message:
        `"${platform}" changed while its key was checked; ask the agent to try again.`,
    };
  }
  auth.audit(platform, "probe", "ok", { status: probe.status, source: "page" });
  return {
    ok: true,
    message:
      `The API key of "${platform}" passed its probe (${probe.status}) and is saved.`,
  };
}

/** Sends the api_key probe with `key`; ok for any 2xx. */
export async function runProbe(
  record: PlatformRecord,
  key: string,
): Promise<{ ok: boolean; status: number; detail: string }> {
  const probe: z.output<typeof ApiKeyProbe> | undefined =
    record.settings.api_key_probe;
  if (probe === undefined) {
    throw new ToolError(
      `Platform "${record.name}" has no api_key_probe to check its key with`,
    );
  }
  try {
    const response = await fetch(probe.url, {
      method: probe.method,
      headers: { [probe.header]: `${probe.prefix}${key}` },
      signal: AbortSignal.timeout(15_000),
      redirect: "manual",
    });
    await response.body?.cancel();
    return {
      ok: response.ok,
      status: response.status,
      detail: `${probe.method} ${probe.url} answered ${response.status}`,
    };
  } catch (error) {
    throw new ToolError(
      `Cannot run the probe of "${record.name}" (${probe.url}): ${
        messageOf(error)
      }`,
    );
  }
}
