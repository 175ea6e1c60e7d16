// What went wrong in the agent runtime, in its own words. The kind names the
// error code clients see (and run records keep); routes/api/v1_http.ts alone
// decides the HTTP status of each kind.

import type { JsonValue } from "../platform/store/mod.ts";

export type AgentErrorKind =
  | "invalid_request"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "unavailable"
  | "bad_gateway"
  | "gateway_timeout";

export class AgentError extends Error {
  override name = "AgentError";
  constructor(
    readonly kind: AgentErrorKind,
    message: string,
    /** What a client can act on (the field, the known names…). */
    readonly details?: JsonValue,
  ) {
    super(message);
  }
}

/** The base of the error classes below: an AgentError of one kind. */
function ofKind(kind: AgentErrorKind) {
  return class extends AgentError {
    constructor(message: string, details?: JsonValue) {
      super(kind, message, details);
    }
  };
}

/** The request names something wrongly or breaks a rule of the resource. */
export class Invalid extends ofKind("invalid_request") {}

/** The caller may not do this (an agent's token acting for another agent). */
export class Forbidden extends ofKind("forbidden") {}

export class NotFound extends ofKind("not_found") {}

/** The request clashes with what is stored (a taken name, a team of deleted agents). */
export class Conflict extends ofKind("conflict") {}

/** Something the runtime needs is not there now (shutting down, gateway or storage down); retry later. */
export class Unavailable extends ofKind("unavailable") {}

/** Another party (an agent's turn, a remote agent) failed to answer. */
export class UpstreamFailed extends ofKind("bad_gateway") {}
