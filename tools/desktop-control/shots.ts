// Screenshots remembered per session, so mouse tools can take coordinates in
// the image an agent looked at: HiDPI or downscaled, the click lands on the
// screen pixel under that image pixel.

import type { Point, Region } from "./backends/port.ts";

export interface Shot {
  id: string;
  /** The captured screen area, in screen pixels. */
  region: Region;
  /** The image's size. */
  width: number;
  height: number;
}

export type CoordinateSpace = "image" | "screen";

const KEEP = 64;

export class ShotLedger {
  readonly #shots = new Map<string, Shot>();
  readonly #last = new Map<string, string>();
  #next = 1;

  record(session: string, region: Region, width: number, height: number): Shot {
    const id = `s${this.#next++}`;
    const shot = { id, region, width, height };
    this.#shots.set(id, shot);
    if (this.#shots.size > KEEP) {
      const oldest = this.#shots.keys().next();
      if (!oldest.done) this.#shots.delete(oldest.value);
    }
    this.#last.set(session, id);
    return shot;
  }

  /** The screenshot whose image space applies: the one named, else the session's last. */
  shotFor(session: string, id: string | undefined): Shot | undefined {
    if (id !== undefined) {
      const shot = this.#shots.get(id);
      if (!shot) {
        throw new Error(
          `screenshot_id "${id}" is unknown (only the last ${KEEP} screenshots are kept); take a new screenshot`,
        );
      }
      return shot;
    }
    const last = this.#last.get(session);
    return last === undefined ? undefined : this.#shots.get(last);
  }
}

/** The screen pixel under image pixel `point` of `shot`; throws naming the field when outside. */
export function imageToScreen(shot: Shot, point: Point, field: string): Point {
  if (
    point.x < 0 || point.y < 0 || point.x >= shot.width ||
    point.y >= shot.height
  ) {
    throw new Error(
      `${field} (${point.x}, ${point.y}) is outside screenshot ${shot.id} (${shot.width}×${shot.height} image pixels)`,
    );
  }
  const { region } = shot;
  return {
    x: region.x +
      Math.min(
        region.width - 1,
        Math.floor(((point.x + 0.5) * region.width) / shot.width),
      ),
    y: region.y +
      Math.min(
        region.height - 1,
        Math.floor(((point.y + 0.5) * region.height) / shot.height),
      ),
  };
}
