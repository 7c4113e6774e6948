// The module hooks of record-loads.mjs: they run on Node's hooks thread.
import { appendFileSync } from 'node:fs';

let file;

export function initialize(data) {
  file = data;
}

export async function load(url, context, next) {
  if (file && !url.startsWith('node:')) appendFileSync(file, `${url}\n`);
  return next(url, context);
}
