// A lease says which process works on something kept in a shared store (an
// agent run, an MCP task) and when it last said so. A daemon sharing the
// store takes the work for dead only when the lease is stale or its process
// is gone, so a live peer's work survives another daemon's start.

import { z } from "zod";

export const Lease = z.object({
  /** The working process's instance id (a UUID per service or task board). */
  owner: z.string().min(1),
  host: z.string(),
  pid: z.number().int().positive(),
  /** ISO 8601; renewed every few seconds while the work goes on. */
  heartbeat_at: z.string().refine((text) => !Number.isNaN(Date.parse(text))),
});
export type Lease = z.infer<typeof Lease>;

/** Why a lease is taken for dead: its process is gone (this host), or it was not renewed in time. */
export type DeadLease = "process_gone" | "stale";

export function deadLease(
  lease: Lease,
  options: { staleMs: number; host: string; nowMs: number },
): DeadLease | undefined {
  if (options.nowMs - Date.parse(lease.heartbeat_at) > options.staleMs) {
    return "stale";
  }
  if (
    lease.host === options.host && Deno.build.os !== "windows" &&
    !processAlive(lease.pid)
  ) {
    return "process_gone";
  }
  return undefined;
}

/**
 * False only when no process has this pid. This process is alive (another
 * service in it owns the lease); a pid reused by an unrelated process looks
 * alive, and its lease goes stale instead.
 */
function processAlive(pid: number): boolean {
  if (pid === Deno.pid) return true;
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch (error) {
    // EPERM (another user's process) or no permission to signal: unknown, so alive.
    return !(error instanceof Deno.errors.NotFound);
  }
}
