/**
 * Lines a process has written but not yet flushed, kept in shared memory so that another thread
 * can write them out when this one cannot: `lqb work` gathers its lines for one write per turn of
 * the event loop, and the watchdog, ending a process whose loop a handler holds, writes what was
 * gathered first (the blocked job's "Processing:" line among it), as a flushed log would show.
 *
 * Layout: an Int32 count of bytes at offset 0, the bytes from PENDING_BYTES_AT.
 */
export interface PendingOutput {
  buffer: SharedArrayBuffer;
  /** The file descriptor the bytes are for (1: standard output). */
  fd: number;
}

export const PENDING_BYTES_AT = 8;

let registered: PendingOutput | undefined;

/** Names the shared buffer a watchdog started from now on writes out before it ends the process. */
export function registerPendingOutput(output: PendingOutput | undefined): void {
  registered = output;
}

export function pendingOutput(): PendingOutput | undefined {
  return registered;
}
