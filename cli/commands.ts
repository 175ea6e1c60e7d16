// The module of each command, loaded when that command runs (platform/lazy.ts):
// `agentd` starts no command's graph but its own. lazy_modules.ts lists these
// with every other lazy module for deno compile's --include.

import { lazyModule } from "../platform/lazy.ts";

/** The CLI's commands (cli/main.ts), and boot.ts whose startup errors it tells apart. */
export const commands = {
  serve: lazyModule<typeof import("./serve.ts")>(
    "./serve.ts",
    import.meta.url,
  ),
  mcp: lazyModule<typeof import("./mcp.ts")>(
    "./mcp.ts",
    import.meta.url,
  ),
  doctor: lazyModule<typeof import("./doctor.ts")>(
    "./doctor.ts",
    import.meta.url,
  ),
  nativeHost: lazyModule<typeof import("./native_host.ts")>(
    "./native_host.ts",
    import.meta.url,
  ),
  service: lazyModule<typeof import("./service.ts")>(
    "./service.ts",
    import.meta.url,
  ),
  ui: lazyModule<typeof import("./ui.ts")>(
    "./ui.ts",
    import.meta.url,
  ),
  policy: lazyModule<typeof import("./policy.ts")>(
    "./policy.ts",
    import.meta.url,
  ),
  boot: lazyModule<typeof import("./boot.ts")>(
    "./boot.ts",
    import.meta.url,
  ),
};
