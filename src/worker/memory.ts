/**
 * The worker's memory, as Laravel's memoryExceeded() sees PHP's: memory_get_usage() counts the
 * script's live values, which PHP frees as soon as nothing refers to them. V8 frees only when it
 * collects, so the heap in use between collections is mostly garbage, and at a high concurrency
 * passes any limit long before the live data does. What compares is the heap right after the
 * last full (mark-sweep) collection: V8 runs one as the live heap grows, so a worker that really
 * holds more than its limit is seen within one collection.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';

let liveHeap = 0;
let observer: PerformanceObserver | undefined;
let users = 0;

/** Starts following full collections (once per process, however many workers). */
export function watchLiveHeap(): void {
  if (users++ > 0) return;
  // Until the first full collection, the heap as it is now stands in for the live heap.
  liveHeap = process.memoryUsage().heapUsed;
  observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
        liveHeap = process.memoryUsage().heapUsed;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}

export function unwatchLiveHeap(): void {
  if (--users > 0) return;
  observer?.disconnect();
  observer = undefined;
}

/** MB of JS heap live after the last full collection. */
export function liveHeapMb(): number {
  return liveHeap / 1024 / 1024;
}
