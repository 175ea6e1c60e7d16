// Base64 for bytes of any size (btoa/atob work on binary strings).

export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  const step = 0x8000; // String.fromCharCode takes a bounded argument list
  for (let i = 0; i < bytes.length; i += step) {
    binary += String.fromCharCode(...bytes.subarray(i, i + step));
  }
  return btoa(binary);
}

/** Throws on text that is not base64. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
