// Icons (MCP 2025-11-25 `icons` on Implementation and Tool): each server's
// SVG and its tool groups', served by the daemon at ICON_PREFIX (public, like
// any image: nothing secret in them). A tool's listing carries its group's
// icon as a path (`/icons/memory/entry.svg`; listingOf, from the tool's
// `group`), one reference per group, not the image: an HTTP tools/list
// answers it as a URL on the origin the client reached, and where no URL is
// known (stdio, in-process links) it is dropped.
// serverInfo carries the server's icon inline as a `data:` URI, as it is
// built before any request says where the daemon is.

import type { Icon, Tool } from "../../platform/mcp_sdk_types.ts";
import { encodeBase64 } from "../../platform/base64.ts";
import type { AnyServerSpec } from "./mod.ts";

export const ICON_PREFIX = "/icons/";
export const ICON_TYPE = "image/svg+xml";

/** Where the daemon serves a server's icon, or one of its groups'. */
export function iconPath(server: string, group?: string): string {
  return group === undefined
    ? `${ICON_PREFIX}${server}.svg`
    : `${ICON_PREFIX}${server}/${group}.svg`;
}

/** Every icon of `specs` by path, for the daemon's icon route. */
export function iconFiles(
  specs: readonly AnyServerSpec[],
): Map<string, string> {
  const files = new Map<string, string>();
  for (const spec of specs) {
    if (spec.icons === undefined) continue;
    files.set(iconPath(spec.id), spec.icons.svg);
    for (const [group, icon] of Object.entries(spec.icons.groups)) {
      files.set(iconPath(spec.id, group), icon.svg);
    }
  }
  return files;
}

/** Each spec's icon as a `data:` URI, encoded once (serverInfo is built per session). */
const dataUris = new WeakMap<AnyServerSpec, string>();

/** The server's icon inline, for serverInfo (no daemon URL is known there). */
export function serverInfoIcons(spec: AnyServerSpec): Icon[] | undefined {
  if (spec.icons === undefined) return undefined;
  let src = dataUris.get(spec);
  if (src === undefined) {
    const data = encodeBase64(new TextEncoder().encode(spec.icons.svg));
    src = `data:${ICON_TYPE};base64,${data}`;
    dataUris.set(spec, src);
  }
  return [{ src, mimeType: ICON_TYPE, sizes: ["any"] }];
}

/** Listings answered per origin: a client reaches the daemon by a few names only. */
const answered = new Map<string, WeakMap<Tool, Tool>>();
const MAX_ORIGINS = 16;

/**
 * `tools` as a client at `origin` (`http://127.0.0.1:8765`) gets them: icon
 * paths become URLs there; with no origin (stdio, a link) they are dropped.
 */
export function iconsAt(
  tools: readonly Tool[],
  origin: string | undefined,
): Tool[] {
  let done = answered.get(origin ?? "");
  if (!done) {
    if (answered.size >= MAX_ORIGINS) answered.clear();
    done = new WeakMap();
    answered.set(origin ?? "", done);
  }
  const cache = done;
  return tools.map((tool) => {
    if (!tool.icons?.some(isOwnPath)) return tool;
    let out = cache.get(tool);
    if (out) return out;
    const icons = tool.icons.flatMap((icon) =>
      !isOwnPath(icon)
        ? [icon]
        : origin === undefined
        ? []
        : [{ ...icon, src: `${origin}${icon.src}` }]
    );
    out = { ...tool };
    if (icons.length > 0) out.icons = icons;
    else delete out.icons;
    cache.set(tool, out);
    return out;
  });
}

function isOwnPath(icon: Icon): boolean {
  return icon.src.startsWith(ICON_PREFIX);
}
