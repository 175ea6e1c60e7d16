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

/** The request names something wrongly or breaks a rule of the resource. */
export class Invalid extends AgentError {
  constructor(message: string, details?: JsonValue) {
    super("invalid_request", message, details);
  }
}

/** The caller may not do this (an agent's token acting for another agent). */
export class Forbidden extends AgentError {
  constructor(message: string, details?: JsonValue) {
    super("forbidden", message, details);
  }
}

export class NotFound extends AgentError {
  constructor(message: string, details?: JsonValue) {
    super("not_found", message, details);
  }
}

/** The request clashes with what is stored (a taken name, a team of deleted agents). */
export class Conflict extends AgentError {
  constructor(message: string, details?: JsonValue) {
    super("conflict", message, details);
  }
}

/** Something the runtime needs is not there now (shutting down, gateway or storage down); retry later. */
export class Unavailable extends AgentError {
  constructor(message: string, details?: JsonValue) {
    super("unavailable", message, details);
  }
}

/** Another party (an agent's turn, a remote agent) failed to answer. */
export class UpstreamFailed extends AgentError {
  constructor(message: string, details?: JsonValue) {
    super("bad_gateway", message, details);
  }
}
