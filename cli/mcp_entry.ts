// `agentd mcp …`'s way into the CLI (main.ts loads it instead of cli/main.ts
// for that command): the CLI, with the two seams `mcp memory` runs deferred
// beside it. Deno 2.9.6 never finds in its V8 code cache an npm module that
// a dynamically imported module names directly; imported here (loaded and
// compiled with this graph, run only when the command imports them) their
// npm modules hit the cache. `serve` and the other commands do not compile
// them at start (about 2 MiB of an idle daemon).

import defer * as _mcpSdkServer from "../platform/mcp_sdk_server.ts";
import defer * as _snowball from "../platform/snowball.ts";

export { main } from "./main.ts";

// A use, so the transpiler keeps the deferred imports (reading a namespace runs nothing).
void [_mcpSdkServer, _snowball];
