// A local X display's socket, judged without Xlib (mod.ts's display
// watch, and `serve`'s preflight.ts, which must not load the X11 code).

/**
 * Why the X display `name` surely cannot be opened now, judged without Xlib:
 * a local display (`:N`) whose socket is missing. XOpenDisplay blocks the
 * whole process while it connects, so a lost display is retried only once
 * its socket is back. Remote displays are not judged here.
 */
export function localDisplayMissing(name: string): string | undefined {
  const socket = localDisplaySocket(name);
  if (socket === undefined) return undefined;
  try {
    Deno.statSync(socket);
    return undefined;
  } catch {
    return `no X server listens on "${name}" (${socket} is missing)`;
  }
}

/** The socket file of a local X display (`:N`, `unix:N.S`); undefined for a remote one. */
export function localDisplaySocket(name: string): string | undefined {
  const local = /^(?:unix)?:(\d+)(?:\.\d+)?$/.exec(name);
  return local === null ? undefined : `/tmp/.X11-unix/X${local[1]}`;
}
