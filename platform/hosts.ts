// Which bind hosts are loopback or wildcard: read by the CLI before any HTTP
// code (Hono, the guards) is loaded.

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]"]);

export function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.has(host.toLowerCase()) ||
    /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function isWildcard(host: string): boolean {
  return WILDCARD_HOSTS.has(host);
}
