// Every module agentd imports on first use instead of at start
// (platform/lazy.ts), each named once: the commands the CLI runs
// (cli/commands.ts keeps their loaders), the built-in servers
// (tools/registry.ts keeps theirs), and the modules their own importer loads
// when a path is first taken. `deno task compile`
// passes every path here to --include (compile.ts): `deno compile` embeds
// only what it sees from main.ts, so a module missing here is missing from
// the binary. tests/cli/lazy_modules_test.ts fails when a lazy() call names a
// module that is not here, or this names one nobody loads.

import { commands } from "./cli/commands.ts";
import { BUILTIN_SERVER_MODULES } from "./tools/registry.ts";

/**
 * Loaded by the module that needs them, with `lazy<typeof import(...)>`
 * there; by who and why. Paths from the repository root.
 */
const ON_FIRST_USE = [
  // main.ts: the CLI, after `mcp <server>`'s stdio front started.
  "cli/main.ts",
  "cli/mcp_entry.ts",
  // cli/mcp.ts: Hono and the routes, for `mcp <server> --port` only.
  "cli/http_face.ts",
  // cli/http_face.ts and platform-auth's validation: jose, when JWTs are
  // configured or a token is validated.
  "platform/jwt.ts",
  // platform-auth's provider: oauth4webapi, on the first grant or discovery.
  "tools/platform-auth/oauth.ts",
  // platform-auth's preflight: the key and the vault, when a store is to unseal.
  "platform/secrets.ts",
  "tools/platform-auth/vault.ts",
  // platform/store/open.ts: the PostgreSQL driver, for a postgres:// store.
  "platform/store/pg.ts",
  // platform/browser.ts: puppeteer-core, on the first launch or attach.
  "platform/puppeteer.ts",
  // platform/keychain.ts: DPAPI bindings, on Windows only.
  "ffi/win32_crypt.ts",
  // The MCP SDK's server side (its Server, ajv, zod 3) and HTTP transport,
  // on a daemon's first MCP session or stateless request (kit's
  // http_server.ts) or in-process connection (peer.ts); the SDK's Client, on
  // the gateway's first upstream connection (its transports.ts).
  "tools/kit/transport/sdk_server.ts",
  "platform/mcp_sdk_http_server.ts",
  "platform/mcp_sdk_client_class.ts",
  // routes/mod.ts: the OpenAPI document (/v1/openapi.json, /docs), on its first request.
  "routes/api/openapi.ts",
  // agents/providers/mod.ts: a model's endpoint and wire format, on its first call.
  "agents/providers/wire.ts",
  // agents/a2a/client.ts: @a2a-js/sdk, on the first message to a remote agent.
  "agents/a2a/sdk_client.ts",
  // desktop-control's image.ts: the npm image codecs, on the first screenshot
  // that needs them.
  "tools/desktop-control/image_codec.ts",
  // desktop-control's backend.ts: this OS's adapter and its FFI bindings.
  "tools/desktop-control/backends/x11.ts",
  "tools/desktop-control/backends/x11_clipboard.ts",
  "tools/desktop-control/backends/darwin.ts",
  "tools/desktop-control/backends/win32.ts",
  // memory's backends/open.ts: hosted mode (MCP client, KV Connect, queue).
  "tools/memory/backends/open_hosted.ts",
  // memory's backends/open_hosted.ts: the PostgreSQL driver.
  "tools/memory/backends/pg.ts",
];

/** Every module above, from the repository root: deno compile's --include list. */
export const LAZY_MODULE_PATHS: readonly string[] = [
  ...Object.values(commands).map((module) => module.path),
  ...BUILTIN_SERVER_MODULES.map((module) => module.path),
  ...ON_FIRST_USE,
];
