/**
 * `npm run bench`: every benchmark in one run, so baselines and competitors share the machine's state.
 * Pick some with `npm run bench -- core toolkit avatar`.
 */
import { benchCore } from './core.js'
import { benchToolkitA } from './toolkit-a.js'
import { benchToolkitB } from './toolkit-b.js'
import { benchAvatar } from './avatar.js'
import { benchPeers } from './peers.js'
import { benchLogin } from './login.js'
import { benchScale } from './scale.js'
import { benchDemo } from './demo.js'
import { benchSoak } from './soak.js'
import { benchLadder } from './ladder.js'

const suites: Record<string, () => Promise<void>> = {
  core: benchCore,
  toolkit: async () => { await benchToolkitA(); await benchToolkitB() },
  avatar: benchAvatar,
  peers: benchPeers,
  login: benchLogin,
  scale: benchScale,
  demo: benchDemo,
  soak: benchSoak,
  ladder: benchLadder
}

const wanted = process.argv.slice(2)
const unknown = wanted.filter((w) => !(w in suites))
if (unknown.length > 0) {
  console.error(`bench: unknown suite(s) ${unknown.join(', ')}; choose from ${Object.keys(suites).join(', ')}`)
  process.exit(2)
}
for (const [name, run] of Object.entries(suites)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue
  await run()
}
