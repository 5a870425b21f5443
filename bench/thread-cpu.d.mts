/** See thread-cpu.mjs: the main thread's CPU time so far, in µs, or NaN off Linux. */
export function mainThreadCpu(): number;
