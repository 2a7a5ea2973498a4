/**
 * `npm run bench`: every benchmark in one run, so baselines and competitors share the machine's state.
 * Pick some with `npm run bench -- core toolkit avatar`. `ladder:ir`, `toolkit:ir` and `dpop:ir` (never part of a full run)
 * count instructions per request under callgrind instead of CPU time (bench/callgrind.ts; needs valgrind).
 * `toolkit-c` runs only the third part of the toolkit suite (go-pkgz/rest v1.21-v1.24's middleware).
 */
import { benchCore } from './core.js'
import { benchToolkitA } from './toolkit-a.js'
import { benchToolkitB } from './toolkit-b.js'
import { benchToolkitC } from './toolkit-c.js'
import { benchAvatar } from './avatar.js'
import { benchPeers } from './peers.js'
import { benchLogin } from './login.js'
import { benchScale } from './scale.js'
import { benchDemo } from './demo.js'
import { benchLadder } from './ladder.js'
import { benchRefreshGrants } from './refresh-grants.js'
import { benchBearer } from './bearer.js'
import { benchDPoP } from './dpop.js'
import { benchSoak } from './soak.js'
import { callgrindAvailable } from './callgrind.js'

const suites: Record<string, () => Promise<void>> = {
  core: benchCore,
  toolkit: async () => { await benchToolkitA(); await benchToolkitB(); await benchToolkitC() },
  'toolkit-c': benchToolkitC,
  avatar: benchAvatar,
  peers: benchPeers,
  login: benchLogin,
  scale: benchScale,
  demo: benchDemo,
  ladder: benchLadder,
  bearer: benchBearer,
  dpop: benchDPoP,
  refresh: benchRefreshGrants,
  soak: benchSoak
}
/** Run only when named: parts of a suite (a full run reaches them through their suite), and the soak (minutes per case). */
const PARTS = new Set(['toolkit-c', 'soak'])
/** Suites that can count instructions instead: `<name>:ir`. */
const COUNTABLE = new Set(['ladder', 'toolkit', 'dpop'])

const wanted = process.argv.slice(2)
const counted = wanted.filter((w) => w.endsWith(':ir')).map((w) => w.slice(0, -3))
const unknown = wanted.filter((w) => !(w in suites) && !(w.endsWith(':ir') && COUNTABLE.has(w.slice(0, -3))))
if (unknown.length > 0) {
  console.error(`bench: unknown suite(s) ${unknown.join(', ')}; choose from ${Object.keys(suites).join(', ')}, ${[...COUNTABLE].map((n) => `${n}:ir`).join(', ')}`)
  process.exit(2)
}
for (const [name, run] of Object.entries(suites)) {
  if (wanted.length > 0 ? !wanted.includes(name) : PARTS.has(name)) continue
  await run()
}
if (counted.length > 0) {
  if (!await callgrindAvailable()) {
    console.error('bench: the :ir suites need valgrind (valgrind and callgrind_control on the PATH)')
    process.exit(2)
  }
  process.env.BENCH_MEASURE = 'callgrind'
  for (const name of counted) await suites[name]!()
}
