// A URL as logs and error messages may show it.

/** The URL without password, query or fragment; "(invalid URL)" when it does not parse. */
export function publicUrl(url: string): string {
  const parsed = URL.parse(url);
  if (parsed === null) return "(invalid URL)";
  parsed.password = "";
  parsed.search = "";
  parsed.hash = "";
  return parsed.toString();
}
