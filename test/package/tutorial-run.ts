/**
 * Running the README's tutorial as a reader does, in a folder of the scratch app: a shell runs its `.env` lines as
 * written (the hash CLI reads Alice's password from the pipe, as its first line), the start command of the Node
 * version at hand starts `app.ts`, and the app is used over HTTP like a browser would.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { dirname } from 'node:path'
import { atLeast, type NodeBinary } from '../helpers/node-binaries.js'
import { tutorialCommands } from './scratch-apps.js'

/** Environment variables of the test runner that must not reach a user's program. */
const RUNNER_ONLY = (k: string): boolean => k.startsWith('TAP') || k.startsWith('npm_') || ['NODE_OPTIONS', 'INIT_CWD', 'AUTH_SECRET', 'ALICE_HASH'].includes(k)

/** This process's environment without the runner's variables, with `node` (and so npx's Node) first on PATH. */
export function userEnv (node: NodeBinary, extra: Record<string, string> = {}): Record<string, string> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !RUNNER_ONLY(k) && v !== undefined)) as Record<string, string>
  return { ...base, PATH: `${dirname(node.bin)}:${process.env.PATH ?? ''}`, ...extra }
}

/** The tutorial's start command for this Node (`node --env-file=.env app.ts`, with the flag before 22.18). */
export function startArgs (node: NodeBinary): string[] {
  const { start, startBefore2218 } = tutorialCommands()
  return atLeast(node.version, [22, 18, 0]) ? start : startBefore2218
}

/** A started app: its output so far, and a stop that waits for the exit. */
export interface RunningApp { child: ChildProcess; log: () => string; stop: () => Promise<void> }

/** Starts `node <args>` in `cwd`; resolves once it logged that it listens, or it exited. */
export async function startApp (node: NodeBinary, args: string[], cwd: string, env: Record<string, string> = {}): Promise<RunningApp> {
  const child = spawn(node.bin, args, { cwd, env: userEnv(node, env), stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  child.stdout!.on('data', (d: Buffer) => { log += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { log += d.toString() })
  const exited = once(child, 'close')
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  while (!log.includes('Server listening') && child.exitCode === null && child.signalCode === null) {
    await Promise.race([once(child.stdout!, 'data'), once(child.stderr!, 'data'), exited])
  }
  clearTimeout(timer)
  return {
    child,
    log: () => log,
    stop: async () => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGTERM'); await exited } }
  }
}

/** What a browser does with the tutorial app: a wrong and a right password, then the guarded routes with its cookies. */
export async function useTutorial (base: string): Promise<{ wrong: number; login: number; cookieNames: string[]; me: [number, unknown]; admin: [number, unknown]; guest: number }> {
  const login = (passwd: string): Promise<Response> => fetch(`${base}/auth/local/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'alice', passwd }) })
  const wrong = (await login('not-alices')).status
  const ok = await login('alice-pw')
  const cookies = ok.headers.getSetCookie().map((c) => c.split(';')[0]!)
  const xsrf = cookies.find((c) => c.startsWith('XSRF-TOKEN='))?.slice('XSRF-TOKEN='.length) ?? ''
  const call = async (path: string): Promise<[number, unknown]> => {
    const r = await fetch(`${base}${path}`, { headers: { cookie: cookies.join('; '), 'x-xsrf-token': xsrf } })
    return [r.status, await r.json()]
  }
  return {
    wrong,
    login: ok.status,
    cookieNames: cookies.map((c) => c.split('=')[0]!).sort(),
    me: await call('/api/me'),
    admin: await call('/api/admin'),
    guest: (await fetch(`${base}/api/me`)).status
  }
}
