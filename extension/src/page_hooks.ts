// Runs in the page's own world at document_start: forwards console output and
// uncaught errors to the isolated content script (which keeps them for the
// tools and passes them to the background page). It reads nothing and
// exposes nothing; a page may forge these events, which only adds log lines.

/// <reference lib="dom" />

(() => {
  const marker = "__agentdPageHooks";
  const scope: Record<string, unknown> = globalThis;
  if (scope[marker]) return;
  scope[marker] = true;

  const describe = (value: unknown): string => {
    if (typeof value === "string") return value;
    if (value instanceof Error) return `${value.name}: ${value.message}`;
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  };
  const emit = (level: string, args: unknown[]) => {
    const text = args.map(describe).join(" ").slice(0, 2000);
    document.dispatchEvent(
      new CustomEvent("agentd:console", {
        detail: JSON.stringify({ level, text }),
      }),
    );
  };
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    const original = console[level].bind(console);
    console[level] = (...args: unknown[]) => {
      emit(level, args);
      original(...args);
    };
  }
  addEventListener(
    "error",
    (event) => emit("error", [`Uncaught ${event.message}`]),
  );
  addEventListener(
    "unhandledrejection",
    (event) => emit("error", ["Unhandled rejection", event.reason]),
  );
})();
