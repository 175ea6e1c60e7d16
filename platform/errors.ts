/** The message of anything thrown, for error text and logs. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `error` as an Error (a thrown non-Error wrapped), for `onerror` callbacks. */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
