// When the X server goes away while the server runs, calls fail saying so,
// the server moves to Error with the reason, and the process lives on (Xlib
// would exit it).

import assert from "node:assert/strict";
import { waitFor } from "../../helpers.ts";
import { startDesktop, startXvfb, textOf, xTestIgnore } from "./xvfb.ts";

Deno.test({
  name:
    "desktop: a display that dies while running fails calls clearly and keeps the process alive",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    const x = await startXvfb();
    const desktop = await startDesktop(x.display);
    try {
      await desktop.ok("screenshot", {});
      await x.close();
      for (const tool of ["screenshot", "get_window_list"]) {
        const result = await desktop.call(tool, {});
        assert.ok(result.isError, tool);
        assert.match(
          textOf(result),
          new RegExp(`connection to X display "${x.display}" broke`),
          tool,
        );
      }
      const health = await waitFor(
        () => desktop.host.health(),
        (each) => each.phase === "error",
      );
      assert.match(String(health.error), /broke/);
    } finally {
      await desktop.close();
    }
  },
});
