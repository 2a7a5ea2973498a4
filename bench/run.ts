/**
 * `npm run bench`: every benchmark in one run, so baselines and competitors share the machine's state.
 * Pick some with `npm run bench -- core toolkit`.
 */
import { benchCore } from './core.js'

const suites: Record<string, () => Promise<void>> = { core: benchCore }

const wanted = process.argv.slice(2)
for (const [name, run] of Object.entries(suites)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue
  await run()
}
