// Reading an extension's manifest: from its folder (unpacked extensions), and
// its requested permissions split as chrome.management reports them.

import { readFile } from "node:fs/promises";
import { join } from "node:path";

export function strings(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === "string")
    : [];
}

export function stringOr(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

export function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { ...value }
    : {};
}

/** A manifest's requested permissions split the way chrome.management reports them. */
export function manifestPermissions(
  manifest: Record<string, unknown>,
): { permissions: string[]; host_permissions: string[] } {
  const declared = strings(manifest.permissions);
  const hostLike = (item: string) =>
    item === "<all_urls>" || item.includes("://");
  return {
    // MV2 lists hosts among permissions; MV3 has host_permissions.
    permissions: declared.filter((item) => !hostLike(item)),
    host_permissions: [
      ...declared.filter(hostLike),
      ...strings(manifest.host_permissions),
    ],
  };
}

/** The manifest of an unpacked extension read from its folder; undefined when unreadable. */
export async function manifestAt(
  path: string,
): Promise<Record<string, unknown> | undefined> {
  try {
    return record(
      JSON.parse(await readFile(join(path, "manifest.json"), "utf8")),
    );
  } catch {
    return undefined;
  }
}
