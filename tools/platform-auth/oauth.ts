// The one import seam for oauth4webapi (OAuth 2.0 / OIDC client protocol:
// discovery, PKCE, code, refresh, revocation, introspection, device and
// client-credentials grants): every other file imports it through here.

import * as oauth from "oauth4webapi";

export { oauth };
export type * from "oauth4webapi";
