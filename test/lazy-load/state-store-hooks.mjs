// Module hooks for lazy-probe.ts: every module URL under node_modules that the ESM loader loads is appended to
// a log file (synchronously, so it is there before the import that caused it resolves).
import { appendFileSync } from 'node:fs'

let log

export function initialize (data) {
  log = data.log
}

export async function load (url, context, nextLoad) {
  if (url.includes('/node_modules/')) appendFileSync(log, url + '\n')
  return nextLoad(url, context)
}
