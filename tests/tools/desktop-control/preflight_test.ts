// What `serve` judges about the display at start without loading
// desktop-control: not set, no socket, or a socket nobody answers on is an
// error at once; a display that answers waits for the first call; an alert
// webhook or a remote display starts the server with the daemon.

import assert from "node:assert/strict";
import { createLogger } from "../../../platform/log.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { preflight } from "../../../tools/desktop-control/preflight.ts";

function check(env: Record<string, string>, config = {}) {
  return preflight({
    store: new MemoryStore(),
    log: createLogger({ sink: () => {} }),
    config,
    dataDir: "/nonexistent",
    env,
  });
}

/** A display number with no socket, high above what test X servers take. */
function freeDisplay(): number {
  for (let n = 7000 + Math.floor(Math.random() * 1000);; n++) {
    try {
      Deno.statSync(`/tmp/.X11-unix/X${n}`);
    } catch {
      return n;
    }
  }
}

Deno.test("desktop preflight: no display, no socket, a dead socket are errors; a live one waits", async () => {
  const unset = await check({ DISPLAY: "" });
  assert.match(
    String(unset && "error" in unset && unset.error),
    /DISPLAY is not set/,
  );

  const n = freeDisplay();
  const missing = await check({ DISPLAY: `:${n}` });
  assert.match(
    String(missing && "error" in missing && missing.error),
    new RegExp(`Cannot open X display ":${n}": no X server answers there`),
  );

  await Deno.mkdir("/tmp/.X11-unix", { recursive: true, mode: 0o1777 });
  const path = `/tmp/.X11-unix/X${n}`;
  const listener = Deno.listen({ transport: "unix", path });
  try {
    assert.equal(await check({ DISPLAY: `:${n}` }), undefined, "it answers");
    assert.equal(await check({}, { display: `unix:${n}.0` }), undefined);
    listener.close();
    // An X server killed outright leaves its socket file, bound to nobody.
    const killed = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `Deno.listen({ transport: "unix", path: ${
          JSON.stringify(path)
        } }); Deno.kill(Deno.pid, "SIGKILL");`,
      ],
    }).output();
    assert.equal(killed.signal, "SIGKILL");
    Deno.statSync(path);
    const dead = await check({ DISPLAY: `:${n}` });
    assert.match(
      String(dead && "error" in dead && dead.error),
      /no X server answers there/,
    );
  } finally {
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("desktop preflight: an alert webhook or a remote display starts the server with the daemon", async () => {
  assert.deepEqual(
    await check({ DISPLAY: "" }, { alert_webhook: "http://127.0.0.1:9/alert" }),
    { start: "alert_webhook is set: the display is watched from now" },
  );
  assert.deepEqual(await check({ DISPLAY: "x.example:0" }), {
    start: 'display "x.example:0" is remote',
  });
});
