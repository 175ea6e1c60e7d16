// agentd content-script runner (isolated world): part of the companion
// interface of the extension bridge. An extension ships it at its root with
// agentd_main.js; inject_content_script stores scripts in chrome.storage.local
// under "agentd_content_scripts" and registers both files for their match
// patterns. Here each stored script whose patterns match the page is handed
// to agentd_main.js, which runs it in the page's own world (MV3 isolated
// worlds forbid eval and inline scripts). Never on a page of an agentd
// daemon: such a page carries the operator's dashboard session, and Chrome
// patterns cannot name the daemon's port, so the check is made here, against
// the matchers each daemon stores with its scripts (agentd-daemon-check/1:
// inject_content_script looks for this mark before it relies on the check).
(() => {
  if (globalThis.__agentdRunner) return;
  globalThis.__agentdRunner = true;
  const KEY = "agentd_content_scripts";
  const DAEMONS = "agentd_daemon_pages";
  // platform/daemon_origin.ts daemonPageMatcher: {host: regex source, ports}.
  const daemonPage = (matchers, href) => {
    const url = new URL(href);
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    const port = url.port !== ""
      ? Number(url.port)
      : url.protocol === "https:"
      ? 443
      : 80;
    const host = url.hostname.toLowerCase().replace(/\.$/, "");
    return matchers.some((matcher) =>
      matcher.ports.includes(port) && new RegExp(matcher.host).test(host)
    );
  };
  const escape = (text) => text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  const glob = (text) => escape(text).replaceAll("*", ".*");
  // Chrome match patterns: <all_urls>, scheme://host/path; no port means any port.
  const matches = (pattern, href) => {
    const url = new URL(href);
    if (pattern === "<all_urls>") {
      return ["http:", "https:", "file:", "ws:", "wss:", "ftp:"].includes(
        url.protocol,
      );
    }
    const found = /^(\*|[a-z-]+):\/\/([^/]*)(\/.*)$/.exec(pattern);
    if (!found) return false;
    const [, scheme, hostPort, path] = found;
    const protocol = url.protocol.slice(0, -1);
    if (
      scheme === "*"
        ? !["http", "https"].includes(protocol)
        : scheme !== protocol
    ) return false;
    const [host, port] = hostPort.split(/:(?=[^\]]*$)/);
    if (port !== undefined && port !== "*" && port !== (url.port || "")) {
      return false;
    }
    if (host !== "*") {
      if (host.startsWith("*.")) {
        const base = host.slice(2);
        if (url.hostname !== base && !url.hostname.endsWith("." + base)) {
          return false;
        }
      } else if (url.hostname !== host) return false;
    }
    return new RegExp("^" + glob(path) + "$").test(url.pathname + url.search);
  };
  const ready = () =>
    document.documentElement.getAttribute("data-agentd-main") === "ready";
  chrome.storage.local.get([KEY, DAEMONS]).then((items) => {
    // No matchers: the scripts came from an agentd before this check; the
    // next inject_content_script stores them.
    const daemons = items[DAEMONS];
    if (!Array.isArray(daemons) || daemonPage(daemons, location.href)) return;
    const scripts = Object.entries(items[KEY] ?? {}).filter(([, script]) =>
      script.matches.some((pattern) => matches(pattern, location.href))
    );
    const send = () => {
      for (const [id, script] of scripts) {
        document.dispatchEvent(
          new CustomEvent("agentd-run", {
            detail: JSON.stringify({ id, code: script.code }),
          }),
        );
      }
    };
    if (ready()) send();
    else document.addEventListener("agentd-main-ready", send, { once: true });
  });
})();
