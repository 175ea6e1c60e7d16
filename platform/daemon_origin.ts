// The daemon's own origin, as seen from a browser: which URLs, cookies and
// extension match patterns reach this daemon. A page on that origin carries
// the operator's dashboard session (an HttpOnly cookie), so in-page,
// extension-bridge and browser-automation tools must never read it, act in
// it, or set its cookies: one rule, here, for all of them.
//
// Pure (no Deno APIs): the companion extension bundles this same file, so the
// check made in the page (at the moment a script runs) is this rule too.

/** What a browser-side check needs to know about the daemon; plain JSON, sent to the extension with each call. */
export interface DaemonOrigin {
  /** Ports the daemon answers on: the bound one, and the configured one when that differs (0 dropped). */
  ports: number[];
  /**
   * Host names besides the loopback ones that reach the daemon: the bound
   * host, `allowed_hosts`, and the machine's own addresses when bound to a
   * wildcard. Lowercase, IPv6 in brackets.
   */
  hosts: string[];
}

/**
 * Cookies the daemon sets (web/dashboard_session.ts `SESSION_COOKIE`).
 * Cookies are not port-scoped: any page of a loopback host sends them to the
 * daemon, so they are hidden and refused on every host that reaches it,
 * whatever the port.
 */
export const DAEMON_COOKIES: readonly string[] = ["agentd_session"];

/** The daemon's description from its listening address, configured host and port, and allowed_hosts. */
export function daemonOrigin(options: {
  /** `http://127.0.0.1:8765` once listening; undefined on stdio. */
  address?: string;
  bindHost: string;
  port: number;
  allowedHosts: readonly string[];
  /** The machine's own addresses, counted when the bind host is a wildcard. */
  interfaceAddresses?: readonly string[];
}): DaemonOrigin {
  const ports = new Set<number>();
  const hosts = new Set<string>();
  if (options.port > 0) ports.add(options.port);
  if (options.address !== undefined) {
    try {
      const url = new URL(options.address);
      ports.add(portOf(url));
      hosts.add(url.hostname.toLowerCase());
    } catch {
      // not a URL: the configured values still stand
    }
  }
  const wildcard = isWildcardName(hostNameOf(options.bindHost) ?? "");
  for (
    const name of [
      options.bindHost,
      ...options.allowedHosts,
      ...(wildcard ? options.interfaceAddresses ?? [] : []),
    ]
  ) {
    const host = hostNameOf(name);
    if (host !== undefined && !isLoopbackName(host)) hosts.add(host);
  }
  return { ports: [...ports], hosts: [...hosts] };
}

/**
 * A configured name, an address or a cookie domain as a URL hostname
 * (lowercase, canonical IPv4, IPv6 in brackets, no trailing dot, no port).
 */
export function hostNameOf(name: string): string | undefined {
  const trimmed = name.trim().toLowerCase().replace(/^\./, "");
  if (trimmed === "") return undefined;
  // A bare IPv6 address (several colons, no brackets) needs brackets to parse.
  const bracketed = !trimmed.startsWith("[") && trimmed.split(":").length > 2
    ? `[${trimmed}]`
    : trimmed;
  try {
    const host = new URL(`http://${bracketed}/`).hostname;
    return host.replace(/\.$/, "") || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Names that always mean this machine, as a hostname (lowercase, no trailing
 * dot) spells them: localhost and its subdomains, 127.0.0.0/8, ::1,
 * IPv4-mapped loopback (URL parsing writes ::ffff:127.x.y.z as
 * [::ffff:7fxx:xxxx]), and the unspecified addresses (0.0.0.0 and :: connect
 * to the local host on Linux and macOS). A regular expression, so the content
 * script runner (no module imports there) applies this same rule.
 */
const LOOPBACK_HOST = String
  .raw`(?:.*\.)?localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|0\.0\.0\.0|\[::\]|::|\[::ffff:(?:127\.|7f[0-9a-f]{2}:).*`;
const LOOPBACK = new RegExp(`^(?:${LOOPBACK_HOST})$`);

/** Whether a hostname always means this machine (see LOOPBACK_HOST). */
export function isLoopbackName(hostname: string): boolean {
  return LOOPBACK.test(hostname.toLowerCase().replace(/\.$/, ""));
}

function isWildcardName(host: string): boolean {
  return host === "0.0.0.0" || host === "[::]" || host === "::";
}

/** Whether a hostname (any port) names the daemon's machine or one of its configured names. */
export function reachesDaemonHost(
  hostname: string,
  daemon: DaemonOrigin,
): boolean {
  const host = hostNameOf(hostname);
  if (host === undefined) return false;
  return isLoopbackName(host) || daemon.hosts.includes(host);
}

function portOf(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" || url.protocol === "wss:" ? 443 : 80;
}

/** Whether a URL (a tab's, a request's) is on the daemon's origin: its host and one of its ports. */
export function reachesDaemon(url: string, daemon: DaemonOrigin): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (!/^(https?|wss?):$/.test(parsed.protocol)) return false;
  return daemon.ports.includes(portOf(parsed)) &&
    reachesDaemonHost(parsed.hostname, daemon);
}

/** Whether a cookie is the daemon's own: one of its names, on a host that reaches it (cookies ignore ports). */
export function isDaemonCookie(
  cookie: { name: string; domain: string },
  daemon: DaemonOrigin,
): boolean {
  return DAEMON_COOKIES.includes(cookie.name) &&
    reachesDaemonHost(cookie.domain, daemon);
}

/**
 * Whether an extension match pattern (`<all_urls>`, `*://*.localhost/*`,
 * `http://127.0.0.1/*`) could match a page of the daemon's origin.
 */
export function matchPatternReachesDaemon(
  pattern: string,
  daemon: DaemonOrigin,
): boolean {
  if (pattern === "<all_urls>") return true;
  const parts = /^([^:]+):\/\/([^/]*)\//.exec(pattern);
  if (parts === null) return false;
  const [, scheme, authority] = parts;
  if (!/^(\*|https?|wss?)$/.test(scheme)) return false;
  const port = /:(\d+|\*)$/.exec(authority)?.[1];
  const host = port === undefined
    ? authority
    : authority.slice(0, -port.length - 1);
  if (
    port !== undefined && port !== "*" && !daemon.ports.includes(Number(port))
  ) {
    // A port the pattern names, and the daemon does not use: no match.
    return false;
  }
  if (host === "*") return true;
  if (host.startsWith("*.")) {
    const suffix = host.slice(2).toLowerCase();
    const names = ["localhost", "127.0.0.1", "[::1]", ...daemon.hosts];
    return names.some((name) => name === suffix || name.endsWith(`.${suffix}`));
  }
  return reachesDaemonHost(host, daemon);
}

/**
 * Match patterns, for `excludeMatches`, of every host that reaches the
 * daemon, on any port: Chromium refuses a port in a content script's pattern
 * ("Invalid port"), so these also exclude other sites on those hosts. (A
 * 127.0.0.0/8 address beyond 127.0.0.1 has no pattern; `daemonPageMatcher`
 * covers it.)
 */
export function daemonMatchPatterns(daemon: DaemonOrigin): string[] {
  // No port: no HTTP face (stdio), so no page is the daemon's.
  if (daemon.ports.length === 0) return [];
  const names = [
    "localhost",
    "*.localhost",
    "127.0.0.1",
    "[::1]",
    "0.0.0.0",
    ...daemon.hosts,
  ];
  return [...new Set(names)].map((name) => `*://${name}/*`);
}

/**
 * URL patterns in the syntax of CDP's `Fetch.enable` (`*` any run of
 * characters) that match every request URL reaching the daemon, and more: a
 * browser pauses what they match, and `reachesDaemon` decides. A port other
 * than the scheme's default is always written in the URL, so the port alone
 * narrows it; on a default port every URL of that scheme is paused.
 */
export function daemonFetchPatterns(daemon: DaemonOrigin): string[] {
  const patterns = new Set<string>();
  for (const port of daemon.ports) {
    // Written whenever it is not the scheme's default (http://x:443/ too).
    patterns.add(`*:${port}/*`);
    if (port === 80) patterns.add("http://*");
    if (port === 443) patterns.add("https://*");
  }
  return [...patterns];
}

/**
 * The daemon's pages as plain data for code that cannot import this module
 * (extension/agentd_runner.js, bundled into other extensions): a page is the
 * daemon's when it is http(s), its port (80/443 when absent) is in `ports`,
 * and its hostname, lowercase without a trailing dot, matches `host`.
 */
export interface DaemonPageMatcher {
  /** A regular expression source, anchored: loopback names and the daemon's hosts. */
  host: string;
  ports: number[];
}

export function daemonPageMatcher(daemon: DaemonOrigin): DaemonPageMatcher {
  const escaped = daemon.hosts.map((host) =>
    host.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  );
  return {
    host: `^(?:${[LOOPBACK_HOST, ...escaped].join("|")})$`,
    ports: [...daemon.ports],
  };
}

/** The refusal a person reads when a tool meets the daemon's own page. */
export function daemonPageRefusal(what: string, url: string): string {
  return `Refused: ${what} is agentd's own page (${url}). Its pages carry the ` +
    "operator's dashboard session, so browser tools never read, script or " +
    "change them; use a tab showing another site.";
}
