/**
 * The Node.js binaries the README's supported versions are tested on: 22.12.0 (the lowest `engines` allows) and
 * the newest 22 and 24, from the npm registry's `node` packages as `.ci/run` installs them into its cache
 * (GATEHOUSE_NODE_CACHE, default ~/.cache/fastify-gatehouse/node: `node22.12.0`, `node22`, `node24`), plus the
 * Node running the tests when it is a supported one. Nothing is downloaded here: a missing one is reported with
 * the command that installs it, and its tests are skipped with that reason.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

export interface NodeBinary {
  /** What it stands for: `22.12.0`, `newest 22`, `newest 24`, `this process`. */
  label: string
  /** `v22.12.0` */
  version: string
  /** Path of the `node` executable. */
  bin: string
}

/** The cache folder of `.ci/run`. */
export function nodeCache (): string {
  return process.env.GATEHOUSE_NODE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'fastify-gatehouse', 'node')
}

/** The versions the package promises to run on, each in its cache folder (`npm install --prefix <dir> node@<spec>`). */
const WANTED = [
  { label: '22.12.0', spec: '22.12.0' },
  { label: 'newest 22', spec: '22' },
  { label: 'newest 24', spec: '24' }
]

/** `[major, minor, patch]` of `v22.12.0`. */
export function versionParts (version: string): [number, number, number] {
  const [major = 0, minor = 0, patch = 0] = version.replace(/^v/, '').split('.').map(Number)
  return [major, minor, patch]
}

/** Whether `version` is at least `min` (`[22, 18, 0]`). */
export function atLeast (version: string, min: [number, number, number]): boolean {
  const v = versionParts(version)
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i]! > min[i]!
  return true
}

/** The binaries found (one per version), and a reason for each wanted one that is not there. */
export function supportedNodes (): { found: NodeBinary[]; missing: Array<{ label: string; reason: string }> } {
  const found: NodeBinary[] = []
  const missing: Array<{ label: string; reason: string }> = []
  for (const { label, spec } of WANTED) {
    const dir = join(nodeCache(), `node${spec}`)
    const bin = join(dir, 'node_modules', '.bin', 'node')
    if (!existsSync(bin)) {
      missing.push({ label, reason: `Node ${label} is not installed in ${dir} (.ci/run installs it; or: npm install --prefix ${dir} --no-save node@${spec})` })
      continue
    }
    const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()
    if (spec.includes('.') && version !== `v${spec}`) {
      missing.push({ label, reason: `${bin} is ${version}, not ${spec}` })
      continue
    }
    found.push({ label, version, bin })
  }
  if (atLeast(process.version, [22, 12, 0]) && !found.some((n) => n.version === process.version)) {
    found.push({ label: 'this process', version: process.version, bin: process.execPath })
  }
  return { found, missing }
}

/** The binary of the highest version, or undefined for none. */
export function newestOf (nodes: NodeBinary[]): NodeBinary | undefined {
  return nodes.reduce<NodeBinary | undefined>((best, n) => best === undefined || atLeast(n.version, versionParts(best.version)) ? n : best, undefined)
}
