// Windows DPAPI symbol tables (crypt32.dll, and kernel32's LocalFree for the
// buffers DPAPI allocates). Opened only on Windows.

// BOOL CryptProtectData(DATA_BLOB* in, LPCWSTR desc, DATA_BLOB* entropy,
//   PVOID reserved, CRYPTPROTECT_PROMPTSTRUCT* prompt, DWORD flags, DATA_BLOB* out);
// CryptUnprotectData takes the same, but for an LPWSTR* desc (out).
const DPAPI_CALL = {
  parameters: [
    "pointer",
    "pointer",
    "pointer",
    "pointer",
    "pointer",
    "u32",
    "pointer",
  ],
  result: "i32",
} as const;

export const CRYPT32_SYMBOLS = {
  CryptProtectData: DPAPI_CALL,
  CryptUnprotectData: DPAPI_CALL,
} as const;

export const KERNEL32_SYMBOLS = {
  LocalFree: { parameters: ["pointer"], result: "pointer" },
} as const;

/** CRYPTPROTECT_UI_FORBIDDEN: fail rather than show a prompt. */
export const CRYPTPROTECT_UI_FORBIDDEN = 0x1;
