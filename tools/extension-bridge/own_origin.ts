// The daemon's own origin as the bridge meets it in CDP traffic: targets and
// URLs named in a command's parameters, and cookies in its result. A page of
// that origin carries the operator's dashboard session, so no bridge command
// reaches one, and the session cookie never leaves (platform/daemon_origin.ts).

import {
  DAEMON_COOKIES,
  type DaemonOrigin,
  reachesDaemon,
  reachesDaemonHost,
} from "../../platform/daemon_origin.ts";
import type { JsonValue } from "../../platform/store/mod.ts";

/** A target as Target.getTargets lists it. */
export interface TargetInfo {
  targetId: string;
  url: string;
}

function isObject(
  value: JsonValue,
): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Whether an object names one of the daemon's cookies: its name, on a domain
 * or URL that reaches the daemon, or with neither (then any host's).
 */
function namesDaemonCookie(
  value: { [key: string]: JsonValue },
  daemon: DaemonOrigin,
): boolean {
  const { name, domain, url } = value;
  if (typeof name !== "string" || !DAEMON_COOKIES.includes(name)) return false;
  const host = typeof domain === "string" && domain !== ""
    ? domain
    : typeof url === "string"
    ? hostOf(url)
    : undefined;
  return host === undefined || reachesDaemonHost(host, daemon);
}

/**
 * What in `params` reaches the daemon's origin: a URL on it, the id of a
 * target showing it, or its session cookie; undefined when nothing does.
 */
export function daemonReference(
  params: JsonValue,
  daemon: DaemonOrigin,
  targets: readonly TargetInfo[],
): string | undefined {
  if (typeof params === "string") {
    if (reachesDaemon(params, daemon)) return params;
    // A message carried as text (Target.sendMessageToTarget) is read too.
    const inner = embeddedJson(params);
    if (inner !== undefined) return daemonReference(inner, daemon, targets);
    const target = targets.find((info) => info.targetId === params);
    if (target !== undefined && reachesDaemon(target.url, daemon)) {
      return `target ${params} (${target.url})`;
    }
    return undefined;
  }
  if (Array.isArray(params)) {
    for (const item of params) {
      const found = daemonReference(item, daemon, targets);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isObject(params)) return undefined;
  if (namesDaemonCookie(params, daemon)) {
    return `the cookie ${String(params.name)}`;
  }
  for (const value of Object.values(params)) {
    const found = daemonReference(value, daemon, targets);
    if (found !== undefined) return found;
  }
  return undefined;
}

function embeddedJson(text: string): JsonValue | undefined {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `value` without the daemon's session cookie, wherever a list holds it. */
export function withoutDaemonCookies(
  value: JsonValue,
  daemon: DaemonOrigin,
): JsonValue {
  if (Array.isArray(value)) {
    return value.filter((item) =>
      !(isObject(item) && namesDaemonCookie(item, daemon) &&
        typeof item.domain === "string")
    ).map((item) => withoutDaemonCookies(item, daemon));
  }
  if (!isObject(value)) return value;
  const copy: { [key: string]: JsonValue } = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] = withoutDaemonCookies(item, daemon);
  }
  return copy;
}
