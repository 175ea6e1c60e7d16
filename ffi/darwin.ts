// Deno.dlopen symbol tables for macOS desktop control: CoreGraphics (events,
// display capture, window list, screen-recording permission), CoreFoundation
// (the CF values those return) and ApplicationServices (accessibility).

const CGPoint = { struct: ["f64", "f64"] } as const;
const CGRect = { struct: ["f64", "f64", "f64", "f64"] } as const;

const coreGraphicsSymbols = {
  CGMainDisplayID: { parameters: [], result: "u32" },
  CGDisplayBounds: { parameters: ["u32"], result: CGRect },
  CGDisplayPixelsWide: { parameters: ["u32"], result: "usize" },
  CGEventCreate: { parameters: ["pointer"], result: "pointer" },
  CGEventGetLocation: { parameters: ["pointer"], result: CGPoint },
  CGEventCreateMouseEvent: {
    parameters: ["pointer", "u32", CGPoint, "u32"],
    result: "pointer",
  },
  CGEventCreateKeyboardEvent: {
    parameters: ["pointer", "u16", "bool"],
    result: "pointer",
  },
  CGEventKeyboardSetUnicodeString: {
    parameters: ["pointer", "usize", "buffer"],
    result: "void",
  },
  CGEventSetFlags: { parameters: ["pointer", "u64"], result: "void" },
  CGEventPost: { parameters: ["u32", "pointer"], result: "void" },
  CGDisplayCreateImageForRect: {
    parameters: ["u32", CGRect],
    result: "pointer",
  },
  CGImageGetWidth: { parameters: ["pointer"], result: "usize" },
  CGImageGetHeight: { parameters: ["pointer"], result: "usize" },
  CGImageGetBytesPerRow: { parameters: ["pointer"], result: "usize" },
  CGImageGetDataProvider: { parameters: ["pointer"], result: "pointer" },
  CGDataProviderCopyData: { parameters: ["pointer"], result: "pointer" },
  CGImageRelease: { parameters: ["pointer"], result: "void" },
  CGWindowListCopyWindowInfo: {
    parameters: ["u32", "u32"],
    result: "pointer",
  },
  CGPreflightScreenCaptureAccess: { parameters: [], result: "bool" },
} as const satisfies Deno.ForeignLibraryInterface;

const coreFoundationSymbols = {
  CFRelease: { parameters: ["pointer"], result: "void" },
  CFDataGetBytePtr: { parameters: ["pointer"], result: "pointer" },
  CFDataGetLength: { parameters: ["pointer"], result: "isize" },
  CFArrayGetCount: { parameters: ["pointer"], result: "isize" },
  CFArrayGetValueAtIndex: {
    parameters: ["pointer", "isize"],
    result: "pointer",
  },
  CFDictionaryGetValue: {
    parameters: ["pointer", "pointer"],
    result: "pointer",
  },
  CFStringCreateWithCString: {
    parameters: ["pointer", "buffer", "u32"],
    result: "pointer",
  },
  CFStringGetCString: {
    parameters: ["pointer", "buffer", "isize", "u32"],
    result: "bool",
  },
  CFNumberGetValue: {
    parameters: ["pointer", "i32", "buffer"],
    result: "bool",
  },
} as const satisfies Deno.ForeignLibraryInterface;

const applicationServicesSymbols = {
  AXIsProcessTrusted: { parameters: [], result: "bool" },
} as const satisfies Deno.ForeignLibraryInterface;

export type CoreGraphicsLibrary = Deno.DynamicLibrary<
  typeof coreGraphicsSymbols
>;
export type CoreFoundationLibrary = Deno.DynamicLibrary<
  typeof coreFoundationSymbols
>;
export type ApplicationServicesLibrary = Deno.DynamicLibrary<
  typeof applicationServicesSymbols
>;

const FRAMEWORKS = "/System/Library/Frameworks";

export function openCoreGraphics(): CoreGraphicsLibrary {
  return Deno.dlopen(
    `${FRAMEWORKS}/CoreGraphics.framework/CoreGraphics`,
    coreGraphicsSymbols,
  );
}

export function openCoreFoundation(): CoreFoundationLibrary {
  return Deno.dlopen(
    `${FRAMEWORKS}/CoreFoundation.framework/CoreFoundation`,
    coreFoundationSymbols,
  );
}

export function openApplicationServices(): ApplicationServicesLibrary {
  return Deno.dlopen(
    `${FRAMEWORKS}/ApplicationServices.framework/ApplicationServices`,
    applicationServicesSymbols,
  );
}

/** CGEventTypes.h, CGWindow.h, CFString.h, CFNumber.h constants. */
export const CG = {
  kCGHIDEventTap: 0,
  kCGEventLeftMouseDown: 1,
  kCGEventLeftMouseUp: 2,
  kCGEventRightMouseDown: 3,
  kCGEventRightMouseUp: 4,
  kCGEventMouseMoved: 5,
  kCGEventLeftMouseDragged: 6,
  kCGEventOtherMouseDown: 25,
  kCGEventOtherMouseUp: 26,
  kCGMouseButtonLeft: 0,
  kCGMouseButtonRight: 1,
  kCGMouseButtonCenter: 2,
  kCGEventFlagMaskShift: 0x20000n,
  kCGEventFlagMaskControl: 0x40000n,
  kCGEventFlagMaskAlternate: 0x80000n,
  kCGEventFlagMaskCommand: 0x100000n,
  kCGWindowListOptionAll: 0,
  kCGWindowListOptionOnScreenOnly: 1,
  kCGWindowListExcludeDesktopElements: 16,
  kCFStringEncodingUTF8: 0x08000100,
  kCFNumberSInt64Type: 4,
  kCFNumberFloat64Type: 6,
} as const;

/** A CGPoint or CGRect passed by value: f64 fields in a byte buffer. */
export function cgStruct(...fields: number[]): Uint8Array<ArrayBuffer> {
  return new Uint8Array(new Float64Array(fields).buffer);
}
