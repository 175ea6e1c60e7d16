// The abort reason a cancelled task's work sees (tools/kit/tasks.ts): its own
// file, with no imports, so the kit's surface (mod.ts) can export it.

/**
 * The abort reason of a task's work once the task is cancelled (tasks/cancel
 * here, or its record cancelled through another daemon): work that outlives
 * its caller (a team run) stops on this reason, not on any abort.
 */
export class TaskCancelled extends Error {
  constructor(message = "The task was cancelled (tasks/cancel)") {
    super(message);
  }

  /** The text, as the plain string reasons it stands beside are read. */
  override toString(): string {
    return this.message;
  }
}
