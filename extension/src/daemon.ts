// The daemon's origin as the daemon sends it with each call (`params.daemon`),
// read back into the shape platform/daemon_origin.ts checks against.

import type { DaemonOrigin } from "../../platform/daemon_origin.ts";

/** The daemon's origin, sent by the daemon with each call (absent: an older daemon, nothing to refuse). */
export function daemonOf(
  params: Record<string, unknown>,
): DaemonOrigin | undefined {
  const value = params.daemon;
  if (typeof value !== "object" || value === null) return undefined;
  const ports = "ports" in value && Array.isArray(value.ports)
    ? value.ports.filter((port) => typeof port === "number")
    : [];
  const hosts = "hosts" in value && Array.isArray(value.hosts)
    ? value.hosts.filter((host) => typeof host === "string")
    : [];
  return { ports, hosts };
}
