// The loader hooks module-trace.mjs registers (they run on node's loader thread).
import { appendFileSync } from 'node:fs';

let file;

export function initialize(data) {
  file = data.file;
}

export async function load(url, context, next) {
  if (file && url.startsWith('file:')) appendFileSync(file, `${url}\n`);
  return next(url, context);
}
