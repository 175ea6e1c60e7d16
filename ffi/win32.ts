// Deno.dlopen symbol tables for Windows desktop control: user32 (input,
// windows, screen metrics) and gdi32 (screen capture with BitBlt).

const user32Symbols = {
  SetProcessDPIAware: { parameters: [], result: "i32" },
  GetSystemMetrics: { parameters: ["i32"], result: "i32" },
  SetCursorPos: { parameters: ["i32", "i32"], result: "i32" },
  GetCursorPos: { parameters: ["buffer"], result: "i32" },
  SendInput: { parameters: ["u32", "buffer", "i32"], result: "u32" },
  VkKeyScanW: { parameters: ["u16"], result: "i16" },
  GetDC: { parameters: ["pointer"], result: "pointer" },
  ReleaseDC: { parameters: ["pointer", "pointer"], result: "i32" },
  EnumWindows: { parameters: ["function", "isize"], result: "i32" },
  GetWindowTextW: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  GetWindowRect: { parameters: ["pointer", "buffer"], result: "i32" },
  IsWindowVisible: { parameters: ["pointer"], result: "i32" },
  IsIconic: { parameters: ["pointer"], result: "i32" },
  IsWindow: { parameters: ["pointer"], result: "i32" },
  GetWindowThreadProcessId: {
    parameters: ["pointer", "buffer"],
    result: "u32",
  },
  GetForegroundWindow: { parameters: [], result: "pointer" },
  SetForegroundWindow: { parameters: ["pointer"], result: "i32" },
  ShowWindow: { parameters: ["pointer", "i32"], result: "i32" },
  GetClassNameW: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

const gdi32Symbols = {
  CreateCompatibleDC: { parameters: ["pointer"], result: "pointer" },
  CreateCompatibleBitmap: {
    parameters: ["pointer", "i32", "i32"],
    result: "pointer",
  },
  SelectObject: { parameters: ["pointer", "pointer"], result: "pointer" },
  BitBlt: {
    parameters: [
      "pointer",
      "i32",
      "i32",
      "i32",
      "i32",
      "pointer",
      "i32",
      "i32",
      "u32",
    ],
    result: "i32",
  },
  GetDIBits: {
    parameters: [
      "pointer",
      "pointer",
      "u32",
      "u32",
      "buffer",
      "buffer",
      "u32",
    ],
    result: "i32",
  },
  DeleteObject: { parameters: ["pointer"], result: "i32" },
  DeleteDC: { parameters: ["pointer"], result: "i32" },
} as const satisfies Deno.ForeignLibraryInterface;

export type User32Library = Deno.DynamicLibrary<typeof user32Symbols>;
export type Gdi32Library = Deno.DynamicLibrary<typeof gdi32Symbols>;

export function openUser32(): User32Library {
  return Deno.dlopen("user32.dll", user32Symbols);
}

export function openGdi32(): Gdi32Library {
  return Deno.dlopen("gdi32.dll", gdi32Symbols);
}

/** The callback type EnumWindows calls: BOOL (HWND, LPARAM). */
export const ENUM_WINDOWS_PROC = {
  parameters: ["pointer", "isize"],
  result: "i32",
} as const;

/** winuser.h / wingdi.h constants. */
export const W = {
  SM_XVIRTUALSCREEN: 76,
  SM_YVIRTUALSCREEN: 77,
  SM_CXVIRTUALSCREEN: 78,
  SM_CYVIRTUALSCREEN: 79,
  SM_CMONITORS: 80,
  INPUT_MOUSE: 0,
  INPUT_KEYBOARD: 1,
  MOUSEEVENTF_LEFTDOWN: 0x0002,
  MOUSEEVENTF_LEFTUP: 0x0004,
  MOUSEEVENTF_RIGHTDOWN: 0x0008,
  MOUSEEVENTF_RIGHTUP: 0x0010,
  MOUSEEVENTF_MIDDLEDOWN: 0x0020,
  MOUSEEVENTF_MIDDLEUP: 0x0040,
  KEYEVENTF_KEYUP: 0x0002,
  KEYEVENTF_UNICODE: 0x0004,
  SRCCOPY: 0x00cc0020,
  CAPTUREBLT: 0x40000000,
  DIB_RGB_COLORS: 0,
  SW_RESTORE: 9,
} as const;

/** INPUT on x64: type (4) + padding (4) + the 32-byte union. */
export const INPUT_SIZE = 40;
/** BITMAPINFOHEADER plus room for the colour table GetDIBits may write. */
export const BITMAPINFO_SIZE = 44;
