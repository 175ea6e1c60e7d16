// api_key platforms: a stored key is checked with a configured probe
// request; any 2xx means the platform accepts it.

import { messageOf } from "../../platform/errors.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { ToolError } from "../kit/mod.ts";
import type { ApiKeyProbe } from "./config.ts";
import type { PlatformAuth } from "./service.ts";
import type { PlatformRecord } from "./vault.ts";
import type { z } from "zod";

export async function probeStoredKey(
  auth: PlatformAuth,
  record: PlatformRecord,
): Promise<{ [key: string]: JsonValue }> {
  const sealed = record.sealed.api_key;
  if (sealed === undefined) {
    throw new ToolError(
      `Platform "${record.name}" has no api_key; give config.api_key to add_platform`,
    );
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
    throw new ToolError(
      `The API key of "${record.name}" was refused by its probe (${probe.detail}); fix it with add_platform`,
    );
  }
  await auth.setStatus(record, "active");
  auth.audit(record.name, "probe", "ok", { status: probe.status });
  return {
    platform: record.name,
    method: "api_key",
    status: "active",
    probe_status: probe.status,
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
