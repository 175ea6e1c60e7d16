// agentd page-world runner: part of the companion interface of the extension
// bridge, shipped next to agentd_runner.js and registered in the MAIN world.
// It runs the scripts agentd_runner.js hands over; the page's own Content
// Security Policy applies (a page that forbids eval blocks them).
(() => {
  if (globalThis.__agentdMain) return;
  globalThis.__agentdMain = true;
  document.addEventListener("agentd-run", (event) => {
    const { id, code } = JSON.parse(event.detail);
    try {
      (0, Function)(code)();
    } catch (error) {
      console.error(`agentd content script ${id} failed:`, error);
    }
  });
  document.documentElement.setAttribute("data-agentd-main", "ready");
  document.dispatchEvent(new CustomEvent("agentd-main-ready"));
})();
