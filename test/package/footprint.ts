/**
 * What an install put into a node_modules folder: its size on disk as `du -sk` reports it, and every sign of
 * native code (compiled addons, node-gyp build files, packages that run scripts at install time).
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { basename, join } from 'node:path'

export interface Footprint {
  /** Disk usage in KiB (`du -sk`). */
  kib: number
  /** Compiled addons (`*.node`), relative to node_modules. */
  addons: string[]
  /** node-gyp build files (`binding.gyp`). */
  gyp: string[]
  /** Packages whose package.json has a preinstall, install or postinstall script. */
  installScripts: string[]
  /** Names of the packages installed (`name` of every package.json directly under a package folder). */
  packages: Set<string>
}

const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall']

export function footprint (nodeModules: string): Footprint {
  const kib = Number(execFileSync('du', ['-sk', nodeModules], { encoding: 'utf8' }).split('\t')[0])
  const files = readdirSync(nodeModules, { recursive: true, encoding: 'utf8' })
  const out: Footprint = { kib, addons: [], gyp: [], installScripts: [], packages: new Set() }
  for (const file of files) {
    if (file.endsWith('.node')) out.addons.push(file)
    if (basename(file) === 'binding.gyp') out.gyp.push(file)
    if (basename(file) === 'package.json' && isPackageRoot(file)) {
      const pkg = readManifest(join(nodeModules, file))
      if (pkg === undefined) continue
      out.packages.add(pkg.name ?? file)
      if (INSTALL_SCRIPTS.some((s) => pkg.scripts?.[s] !== undefined)) out.installScripts.push(pkg.name ?? file)
    }
  }
  return out
}

/** `x/package.json` or `@scope/x/package.json`, also nested under another package's node_modules. */
function isPackageRoot (file: string): boolean {
  const parts = file.split('/')
  const at = parts.lastIndexOf('node_modules')
  const rest = parts.slice(at + 1)
  return rest.length === 2 || (rest.length === 3 && rest[0]!.startsWith('@'))
}

function readManifest (file: string): { name?: string; scripts?: Record<string, string> } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { name?: string; scripts?: Record<string, string> }
  } catch {
    return undefined
  }
}
