// The one HTTP error shape of every route:
// {"error":{"code":"not_found","message":"…","details":…}}

import type { JsonValue } from "./store/mod.ts";

export type ErrorStatus =
  | 400
  | 401
  | 403
  | 404
  | 405
  | 409
  | 413
  | 415
  | 429
  | 500
  | 502
  | 503
  | 504;

const CODES: Record<ErrorStatus, string> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
  500: "internal",
  502: "bad_gateway",
  503: "unavailable",
  504: "gateway_timeout",
};

/** Thrown by route handlers; one `onError` turns it into the JSON shape. */
export class HttpError extends Error {
  override name = "HttpError";
  constructor(
    readonly status: ErrorStatus,
    message: string,
    readonly details?: JsonValue,
    readonly code: string = CODES[status],
  ) {
    super(message);
  }
}

export function errorBody(
  code: string,
  message: string,
  details?: JsonValue,
): { error: { code: string; message: string; details?: JsonValue } } {
  return details === undefined
    ? { error: { code, message } }
    : { error: { code, message, details } };
}

export function errorResponse(
  status: ErrorStatus,
  message: string,
  options: {
    details?: JsonValue;
    code?: string;
    headers?: Record<string, string>;
  } = {},
): Response {
  return Response.json(
    errorBody(options.code ?? CODES[status], message, options.details),
    {
      status,
      headers: options.headers,
    },
  );
}
