// Module hooks for state-store-probe.ts: every file the ESM loader loads (a package's or one of this project's)
// is appended to a log file (synchronously, so it is there before the import that caused it resolves).
import { appendFileSync } from 'node:fs'

let log

export function initialize (data) {
  log = data.log
}

export async function load (url, context, nextLoad) {
  if (url.startsWith('file:')) appendFileSync(log, url + '\n')
  return nextLoad(url, context)
}
