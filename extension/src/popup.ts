// The popup: connection state of the native host and the daemon, and which
// tabs an agent acted on (asked from the service worker, which it wakes).

/// <reference lib="dom" />
/// <reference types="@types/chrome" />

function show(id: string, text: string, state?: string): void {
  const element = document.getElementById(id);
  if (!element) return;
  element.textContent = text;
  if (state) element.className = `state ${state}`;
}

async function refresh(): Promise<void> {
  const status: unknown = await chrome.runtime.sendMessage({
    type: "popup_status",
  });
  if (typeof status !== "object" || status === null) return;
  const host = "native_host" in status ? String(status.native_host) : "unknown";
  const daemon = "daemon" in status ? String(status.daemon) : "unknown";
  show("host", host, host);
  show("daemon", daemon, daemon);
  show(
    "error",
    "last_error" in status && status.last_error
      ? `Last error: ${String(status.last_error)}`
      : "",
  );
  show(
    "version",
    "version" in status ? `version ${String(status.version)}` : "",
  );
  const list = document.getElementById("tabs");
  if (
    list && "touched_tabs" in status && Array.isArray(status.touched_tabs) &&
    status.touched_tabs.length
  ) {
    list.replaceChildren(
      ...status.touched_tabs.map((tab: unknown) => {
        const item = document.createElement("li");
        if (typeof tab === "object" && tab !== null) {
          const url = "url" in tab ? String(tab.url) : "";
          const action = "last_action" in tab ? String(tab.last_action) : "";
          item.textContent = `${url} (${action})`;
        }
        return item;
      }),
    );
  }
}

void refresh();
setInterval(() => void refresh(), 2000);
