// Screen capture on X11: MIT-SHM (the server copies into shared memory, no
// socket transfer) with a plain XGetImage fallback, and XRandR monitors.

import {
  X,
  XImageLayout,
  XRRMonitorInfoLayout,
  XShmSegmentInfoLayout,
} from "../../../ffi/x11.ts";
import type { Frame, Monitor, Region } from "./port.ts";
import type { XDisplay } from "./x11_display.ts";
import { messageOf } from "../../../platform/errors.ts";

interface ShmImage {
  image: Deno.PointerObject;
  info: Deno.PointerObject;
  address: Deno.PointerObject;
  width: number;
  height: number;
  stride: number;
  pixels: Uint8Array;
}

export class X11Capture {
  readonly #display: XDisplay;
  #shm: ShmImage | undefined;
  /** Why MIT-SHM is not used, when it is not. */
  #shmOff: string | undefined;
  captures = 0;

  constructor(display: XDisplay) {
    this.#display = display;
    const { xext } = display;
    if (!xext) this.#shmOff = "libXext.so.6 not found";
    else if (xext.symbols.XShmQueryExtension(display.pointer) === 0) {
      this.#shmOff = "the X server has no MIT-SHM (remote display?)";
    }
  }

  get method(): string {
    return this.#shmOff === undefined ? "mit-shm" : "xgetimage";
  }

  get shmUnavailable(): string | undefined {
    return this.#shmOff;
  }

  /** The root window's current size (follows XRandR resizes). */
  screen(): Region {
    const d = this.#display;
    const attributes = new Int32Array(34);
    d.x11.symbols.XGetWindowAttributes(d.pointer, d.root, attributes);
    return { x: 0, y: 0, width: attributes[2], height: attributes[3] };
  }

  monitors(): Monitor[] {
    const d = this.#display;
    const screen = this.screen();
    const whole = [{ name: "screen", primary: true, ...screen }];
    if (!d.xrandr) return whole;
    const count = new Int32Array(1);
    const list = d.xrandr.symbols.XRRGetMonitors(d.pointer, d.root, 1, count);
    if (list === null) return whole;
    const view = new Deno.UnsafePointerView(list);
    const monitors: Monitor[] = [];
    for (let i = 0; i < count[0]; i++) {
      const base = i * XRRMonitorInfoLayout.size;
      const atom = view.getBigUint64(base + XRRMonitorInfoLayout.name);
      monitors.push({
        name: this.#atomName(atom) ?? `monitor-${i}`,
        primary: view.getInt32(base + XRRMonitorInfoLayout.primary) !== 0,
        x: view.getInt32(base + XRRMonitorInfoLayout.x),
        y: view.getInt32(base + XRRMonitorInfoLayout.y),
        width: view.getInt32(base + XRRMonitorInfoLayout.width),
        height: view.getInt32(base + XRRMonitorInfoLayout.height),
      });
    }
    d.xrandr.symbols.XRRFreeMonitors(list);
    return monitors.length ? monitors : whole;
  }

  capture(region: Region): Frame {
    this.captures++;
    if (this.#shmOff === undefined) {
      try {
        return this.#captureShm(region);
      } catch (error) {
        // Shared memory can fail (limits, a remote server): keep capturing without it.
        this.#shmOff = `MIT-SHM failed: ${messageOf(error)}`;
        this.#releaseShm();
      }
    }
    return this.#captureGetImage(region);
  }

  #captureShm(region: Region): Frame {
    const d = this.#display;
    const screen = this.screen();
    let shm = this.#shm;
    if (!shm || shm.width !== screen.width || shm.height !== screen.height) {
      this.#releaseShm();
      shm = this.#createShm(screen.width, screen.height);
      this.#shm = shm;
    }
    const image = shm.image;
    const ok = d.trap(
      "XShmGetImage",
      () =>
        d.xext?.symbols.XShmGetImage(
          d.pointer,
          d.root,
          image,
          0,
          0,
          X.AllPlanes,
        ) ?? 0,
    );
    if (ok === 0) throw new Error("XShmGetImage returned False");
    const offset = region.y * shm.stride + region.x * 4;
    return {
      width: region.width,
      height: region.height,
      stride: shm.stride,
      data: shm.pixels.subarray(
        offset,
        offset + (region.height - 1) * shm.stride + region.width * 4,
      ),
    };
  }

  #createShm(width: number, height: number): ShmImage {
    const d = this.#display;
    const xext = d.xext;
    if (!xext) throw new Error("libXext is not loaded");
    const libc = d.libc.symbols;
    const info = libc.calloc(1n, BigInt(XShmSegmentInfoLayout.size));
    if (info === null) throw new Error("calloc failed");
    const visual = d.x11.symbols.XDefaultVisual(d.pointer, d.screenNumber);
    const depth = d.x11.symbols.XDefaultDepth(d.pointer, d.screenNumber);
    const image = xext.symbols.XShmCreateImage(
      d.pointer,
      visual,
      depth,
      X.ZPixmap,
      null,
      info,
      width,
      height,
    );
    if (image === null) {
      libc.free(info);
      throw new Error("XShmCreateImage failed");
    }
    const imageView = new Deno.UnsafePointerView(image);
    const stride = imageView.getInt32(XImageLayout.bytesPerLine);
    const bits = imageView.getInt32(XImageLayout.bitsPerPixel);
    const size = stride * height;
    const shmid = libc.shmget(X.IPC_PRIVATE, BigInt(size), X.IPC_CREAT | 0o600);
    if (shmid < 0) {
      d.x11.symbols.XDestroyImage(image);
      libc.free(info);
      throw new Error(`shmget of ${size} bytes failed`);
    }
    const address = libc.shmat(shmid, null, 0);
    const addressValue = address === null
      ? -1n
      : Deno.UnsafePointer.value(address);
    if (address === null || addressValue === 0xffff_ffff_ffff_ffffn) {
      libc.shmctl(shmid, X.IPC_RMID, null);
      d.x11.symbols.XDestroyImage(image);
      libc.free(info);
      throw new Error("shmat failed");
    }
    // Fill XShmSegmentInfo and point the image at the segment.
    const infoBytes = new DataView(
      Deno.UnsafePointerView.getArrayBuffer(info, XShmSegmentInfoLayout.size),
    );
    infoBytes.setInt32(XShmSegmentInfoLayout.shmid, shmid, true);
    infoBytes.setBigUint64(XShmSegmentInfoLayout.shmaddr, addressValue, true);
    infoBytes.setInt32(XShmSegmentInfoLayout.readOnly, 0, true);
    new DataView(
      Deno.UnsafePointerView.getArrayBuffer(image, XImageLayout.size),
    ).setBigUint64(XImageLayout.data, addressValue, true);
    const attached = d.trap(
      "XShmAttach",
      () => xext.symbols.XShmAttach(d.pointer, info),
    );
    // Marked for removal now: the segment goes away once both sides detach.
    libc.shmctl(shmid, X.IPC_RMID, null);
    if (attached === 0 || bits !== 32) {
      libc.shmdt(address);
      d.x11.symbols.XDestroyImage(image);
      libc.free(info);
      throw new Error(
        bits !== 32
          ? `${bits} bits per pixel is not supported (needs a 24/32-bit visual)`
          : "XShmAttach failed",
      );
    }
    return {
      image,
      info,
      address,
      width,
      height,
      stride,
      pixels: new Uint8Array(
        Deno.UnsafePointerView.getArrayBuffer(address, size),
      ),
    };
  }

  #releaseShm(): void {
    const shm = this.#shm;
    if (!shm) return;
    this.#shm = undefined;
    const d = this.#display;
    if (!d.closed) {
      d.xext?.symbols.XShmDetach(d.pointer, shm.info);
      d.sync();
    }
    // XDestroyImage frees image->data too: clear it, it is the shm segment.
    new DataView(
      Deno.UnsafePointerView.getArrayBuffer(shm.image, XImageLayout.size),
    ).setBigUint64(XImageLayout.data, 0n, true);
    d.x11.symbols.XDestroyImage(shm.image);
    d.libc.symbols.shmdt(shm.address);
    d.libc.symbols.free(shm.info);
  }

  #captureGetImage(region: Region): Frame {
    const d = this.#display;
    const image = d.trap(
      "XGetImage",
      () =>
        d.x11.symbols.XGetImage(
          d.pointer,
          d.root,
          region.x,
          region.y,
          region.width,
          region.height,
          X.AllPlanes,
          X.ZPixmap,
        ),
    );
    if (image === null) throw new Error("XGetImage returned no image");
    try {
      const view = new Deno.UnsafePointerView(image);
      const bits = view.getInt32(XImageLayout.bitsPerPixel);
      if (bits !== 32) {
        throw new Error(
          `${bits} bits per pixel is not supported (needs a 24/32-bit visual)`,
        );
      }
      const stride = view.getInt32(XImageLayout.bytesPerLine);
      const data = view.getPointer(XImageLayout.data);
      if (data === null) throw new Error("XGetImage returned no pixels");
      const pixels = new Uint8Array(
        Deno.UnsafePointerView.getArrayBuffer(data, stride * region.height)
          .slice(0),
      );
      return {
        width: region.width,
        height: region.height,
        stride,
        data: pixels,
      };
    } finally {
      d.x11.symbols.XDestroyImage(image);
    }
  }

  #atomName(atom: bigint): string | undefined {
    if (atom === 0n) return undefined;
    const d = this.#display;
    const name = d.x11.symbols.XGetAtomName(d.pointer, atom);
    if (name === null) return undefined;
    const text = new Deno.UnsafePointerView(name).getCString();
    d.x11.symbols.XFree(name);
    return text;
  }

  close(): void {
    this.#releaseShm();
  }
}
