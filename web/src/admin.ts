// The /admin page's refresh: re-fetches the page's `<main>` and swaps it in,
// so one renderer (web/admin.ts) serves both. Only the fragment is parsed:
// re-parsing the whole page would trip the CSP on its nonce'd `<style>`. The
// page sets the interval as `data-refresh-ms` on `#refresh`.

/// <reference lib="dom" />

const status = document.getElementById("refresh");
const refreshMs = Number(status?.dataset.refreshMs) || 5_000;

async function refresh(): Promise<void> {
  if (!status) return;
  try {
    const response = await fetch(location.pathname + "?format=fragment", {
      cache: "no-store",
    });
    if (!response.ok) throw new Error("HTTP " + response.status);
    const next = new DOMParser().parseFromString(
      await response.text(),
      "text/html",
    ).getElementById("admin");
    const current = document.getElementById("admin");
    if (next && current) current.replaceWith(document.adoptNode(next));
    status.textContent = "Refreshes every " + refreshMs / 1000 + " s";
    status.classList.remove("stale");
  } catch (error) {
    status.textContent = "Refresh failed (" +
      (error instanceof Error ? error.message : String(error)) +
      "); showing older data";
    status.classList.add("stale");
  }
  setTimeout(refresh, refreshMs);
}
setTimeout(refresh, refreshMs);
