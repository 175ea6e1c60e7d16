/** The message of anything thrown, for error text and logs. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
