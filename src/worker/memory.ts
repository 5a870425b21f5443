/**
 * The worker's memory, as Laravel's memoryExceeded() sees PHP's: memory_get_usage() counts the
 * script's live values, which PHP frees as soon as nothing refers to them. V8 frees only when it
 * collects, so the heap in use between collections is mostly garbage, and at a high concurrency
 * passes any limit long before the live data does. What compares is the heap right after the
 * last full (mark-sweep) collection: V8 runs one as the live heap grows, so a worker that really
 * holds more than its limit is seen within one collection.
 *
 * The whole process counts, as queue:work's limit counts its whole process: beside the main
 * thread's JS heap, the Buffers and other memory outside the heap that it holds (`external`,
 * which `heapUsed` leaves out and which a collection frees along with the objects holding it),
 * and the same two figures of every sandbox thread, each isolate measuring its own after its own
 * full collections (sandbox/thread.ts) and its pool adding them up (`countThreadMemory`).
 *
 * A figure taken at a collection that ran mid-job counts that job's working set too, and what
 * was allocated before it could be read: a thread full of short-lived garbage can look bigger
 * than it is. So a limit that looks reached is confirmed before the worker stops
 * (`liveMemoryReaches`): a full collection now, in the main thread and in each sandbox thread,
 * leaves only what is kept (and the working sets of the jobs in flight). It costs one collection
 * per thread, and only near the limit.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let liveHeap = 0;
let observer: PerformanceObserver | undefined;
let users = 0;
/** What a sandbox pool says its threads hold, and how to have its threads measure again. */
export interface ThreadMemory {
  /** Bytes its threads hold live, each as its last full collection left it. */
  bytes(): number;
  /** Has each thread collect in full and say what is left. */
  remeasure(): Promise<void>;
}
/** Each sandbox pool of the process. */
const threadSources = new Set<ThreadMemory>();

/** This isolate's live memory now: its JS heap and what it holds outside it (Buffers among it). */
function heapAndExternal(): number {
  // In a worker thread these two are the thread's own (only rss is the process's).
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
}

/** Starts following full collections (once per process, however many workers). */
export function watchLiveHeap(): void {
  if (users++ > 0) return;
  // Until the first full collection, the heap as it is now stands in for the live heap.
  liveHeap = heapAndExternal();
  observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) liveHeap = heapAndExternal();
    }
  });
  observer.observe({ entryTypes: ['gc'] });
}

export function unwatchLiveHeap(): void {
  if (--users > 0) return;
  observer?.disconnect();
  observer = undefined;
}

/**
 * Counts, from now until the returned function is called, what `source` says a pool's threads
 * hold (bytes) in the process's live memory.
 */
export function countThreadMemory(source: ThreadMemory): () => void {
  threadSources.add(source);
  return () => void threadSources.delete(source);
}

/** MB the sandbox threads hold, as their last full collections left it. */
function threadsMb(): number {
  let bytes = 0;
  for (const source of threadSources) bytes += source.bytes();
  return bytes / 1024 / 1024;
}

/** MB live after the last full collections: the main thread's heap and Buffers, and every sandbox thread's. */
export function liveMemoryMb(): number {
  return liveHeap / 1024 / 1024 + threadsMb();
}

/** What liveMemoryMb() adds up, for the line that says why the worker stopped. */
export function describeLiveMemory(): string {
  const main = liveHeap / 1024 / 1024;
  const threads = threadsMb();
  const parts = threadSources.size > 0 ? ` (the main thread ${Math.round(main)} MB, sandbox threads ${Math.round(threads)} MB)` : '';
  return `the JS heaps and Buffers live after their last full collections hold ${Math.round(main + threads)} MB${parts}`;
}

/**
 * The process's live memory reaches `limitMb`, confirmed: when the figures say so, the main
 * thread (when watched) and the sandbox threads collect in full and measure again first.
 */
export async function liveMemoryReaches(limitMb: number): Promise<boolean> {
  if (liveMemoryMb() < limitMb) return false;
  const collect = users > 0 ? fullCollection() : undefined;
  if (collect) {
    // Twice: the Buffers a collection finds dead are freed by a sweep that runs on after it, and
    // the next collection waits for that sweep to end before it starts.
    collect();
    collect();
    liveHeap = heapAndExternal();
  }
  await Promise.all([...threadSources].map((source) => source.remeasure()));
  return liveMemoryMb() >= limitMb;
}

let collector: (() => void) | undefined;

/**
 * V8's full collection as a function (the one `node --expose-gc` gives), or null where it cannot
 * be had now. Node has no other way to ask for one: the flag is set just long enough to read the
 * function from a fresh context, then unset, so the app's own contexts do not see it.
 */
function fullCollection(): (() => void) | null {
  if (collector) return collector;
  const given = (globalThis as { gc?: unknown }).gc;
  if (typeof given === 'function') return (collector = given as () => void);
  try {
    setFlagsFromString('--expose-gc');
    collector = runInNewContext('gc') as () => void;
  } catch {
    // Another thread unset the flag between the two steps: asked again next time.
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return collector ?? null;
}
