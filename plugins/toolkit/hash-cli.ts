#!/usr/bin/env node
/**
 * `fastify-gatehouse hash --bcrypt [--cost N] | --argon2 [--env NAME]`: prints a hash for `bcryptVerify`,
 * `withBcryptHash` / `withArgon2Hash`. The password comes from stdin: typed without echo (and asked twice) on a
 * terminal, or the first line of a pipe (`printf '%s\n' "$PW" | fastify-gatehouse hash --argon2`). Never from
 * argv, where other users of the machine could read it in the process list. `--env NAME` prints a line ready to
 * paste into a `.env` file or after `export` in a shell, single-quoted: a bcrypt hash in double quotes is expanded
 * by the shell (`"$2b$10$…"` becomes `b0`), which refuses every password without a word.
 */
import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { argon2Hash, bcryptHash, checkArgon2Installed, normalizeCredential } from './password-hash.js'

/** stdin as the CLI uses it; `isTTY`/`setRawMode` exist on a terminal. */
export type CliInput = NodeJS.ReadableStream & { isTTY?: boolean | undefined; setRawMode?: ((raw: boolean) => unknown) | undefined }

const USAGE = `usage: fastify-gatehouse hash --bcrypt [--cost N] | --argon2 [--env NAME]
  reads the password from stdin (no echo on a terminal, else the first line) and prints its hash;
  --argon2 prints "hash=<base64>" and "salt=<base64>" lines for withArgon2Hash;
  --env NAME prints NAME='<hash>' (and NAME_SALT='<salt>' with --argon2), ready for a .env file or export`

/** A name a shell and a `.env` file both take as a variable name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Longest password line read from a pipe or a terminal; a longer one is refused, not cut. */
const MAX_PASSWORD_BYTES = 4096
/** bcrypt reads no more than this many bytes of a password; `bcryptHash` refuses longer ones. */
const BCRYPT_MAX_BYTES = 72

class CliError extends Error {
  constructor (message: string, readonly code: number) { super(message) }
}

/** Runs the CLI; resolves to the exit code (0 ok, 1 failure, 2 usage, 130 interrupted). */
export async function runHashCli (argv: readonly string[], stdin: CliInput, stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream = process.stderr): Promise<number> {
  try {
    const { algo, cost, env } = parseArgs(argv)
    // Before the password is asked for: without argon2 there is nothing to hash it with.
    if (algo === 'argon2') checkArgon2Installed('--argon2')
    const passwd = await readPassword(stdin, stderr)
    if (algo === 'bcrypt') {
      if (Buffer.byteLength(normalizeCredential(passwd)) > BCRYPT_MAX_BYTES) {
        throw new CliError(`the password is longer than bcrypt's ${BCRYPT_MAX_BYTES} bytes (use --argon2)`, 1)
      }
      const hash = await bcryptHash(passwd, cost)
      stdout.write(env === undefined ? `${hash}\n` : `${env}='${hash}'\n`)
    } else {
      const { hash, salt } = await argon2Hash(passwd)
      stdout.write(env === undefined ? `hash=${hash}\nsalt=${salt}\n` : `${env}='${hash}'\n${env}_SALT='${salt}'\n`)
    }
    return 0
  } catch (err) {
    const code = err instanceof CliError ? err.code : 1
    stderr.write(`${(err as Error).message}\n`)
    return code
  }
}

function parseArgs (argv: readonly string[]): { algo: 'bcrypt' | 'argon2'; cost: number; env: string | undefined } {
  const args = [...argv]
  if (args[0] === 'hash') args.shift()
  let algo: 'bcrypt' | 'argon2' | undefined
  let cost = 10
  let env: string | undefined
  while (args.length > 0) {
    const a = args.shift()
    if (a === '--bcrypt' || a === '--argon2') {
      if (algo !== undefined) throw new CliError(`choose one of --bcrypt and --argon2\n${USAGE}`, 2)
      algo = a === '--bcrypt' ? 'bcrypt' : 'argon2'
    } else if (a === '--cost') {
      cost = Number(args.shift())
      if (!Number.isInteger(cost) || cost < 4 || cost > 31) throw new CliError('--cost must be an integer from 4 to 31', 2)
    } else if (a === '--env') {
      env = args.shift()
      if (env === undefined || !ENV_NAME.test(env)) throw new CliError('--env needs a variable name such as ALICE_HASH (letters, digits, _)', 2)
    } else if (a === '--help' || a === '-h') {
      throw new CliError(USAGE, 2)
    } else {
      throw new CliError(`unknown argument ${JSON.stringify(a)}\n${USAGE}`, 2)
    }
  }
  if (algo === undefined) throw new CliError(USAGE, 2)
  return { algo, cost, env }
}

async function readPassword (stdin: CliInput, stderr: NodeJS.WritableStream): Promise<string> {
  let passwd: string
  if (stdin.isTTY === true && typeof stdin.setRawMode === 'function') {
    const [first, second] = await readKeystrokeLines(stdin, stderr, ['Password: ', 'Repeat password: '])
    if (first !== second) throw new CliError('the passwords differ', 1)
    passwd = first!
  } else {
    passwd = await readFirstLine(stdin)
  }
  if (passwd === '') throw new CliError('empty password', 1)
  return passwd
}

/** Raw-mode terminal input: no echo, Backspace edits, Enter ends a line, Ctrl-C / Ctrl-D abort. */
function readKeystrokeLines (stdin: CliInput, stderr: NodeJS.WritableStream, prompts: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const lines: string[] = []
    let current = ''
    const finish = (err?: CliError): void => {
      stdin.removeListener('data', onData)
      stdin.setRawMode!(false)
      stdin.pause()
      if (err !== undefined) reject(err); else resolve(lines)
    }
    const onData = (chunk: Buffer | string): void => {
      for (const ch of chunk.toString()) {
        if (ch === '\u0003') { stderr.write('\n'); finish(new CliError('interrupted', 130)); return }
        if (ch === '\u0004' && current === '') { stderr.write('\n'); finish(new CliError('no password given', 1)); return }
        if (ch === '\r' || ch === '\n') {
          stderr.write('\n')
          lines.push(current)
          current = ''
          if (lines.length === prompts.length) { finish(); return }
          stderr.write(prompts[lines.length]!)
        } else if (ch === '\u007f' || ch === '\b') {
          current = [...current].slice(0, -1).join('')
        } else if (ch >= ' ') {
          current += ch
          if (Buffer.byteLength(current) > MAX_PASSWORD_BYTES) { finish(new CliError('password too long', 1)); return }
        }
      }
    }
    stdin.setRawMode!(true)
    stdin.setEncoding('utf8')
    stdin.on('data', onData)
    stdin.resume()
    stderr.write(prompts[0]!)
  })
}

/** The first line of piped input (without its line break); the rest is not read. */
function readFirstLine (stdin: CliInput): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = ''
    const done = (err: Error | null, line?: string): void => {
      stdin.removeListener('data', onData)
      stdin.removeListener('end', onEnd)
      stdin.removeListener('error', onError)
      stdin.pause()
      if (err !== null) reject(err); else resolve(line!)
    }
    const onData = (chunk: Buffer | string): void => {
      buf += chunk.toString()
      const nl = buf.indexOf('\n')
      if (nl !== -1) { done(null, buf.slice(0, nl).replace(/\r$/, '')); return }
      if (Buffer.byteLength(buf) > MAX_PASSWORD_BYTES) done(new CliError('password too long', 1))
    }
    const onEnd = (): void => { done(null, buf.replace(/\r$/, '')) }
    const onError = (err: Error): void => { done(err) }
    stdin.setEncoding('utf8')
    stdin.on('data', onData)
    stdin.once('end', onEnd)
    stdin.once('error', onError)
    stdin.resume()
  })
}

/** True when this file is the program being run (directly or through the package's bin link). */
function isMain (): boolean {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    return realpathSync(entry) === fileURLToPath(import.meta.url)
  } catch {
    return false
  }
}

if (isMain()) {
  runHashCli(process.argv.slice(2), process.stdin, process.stdout).then((code) => { process.exitCode = code }, (err: unknown) => {
    process.stderr.write(`${String(err)}\n`)
    process.exitCode = 1
  })
}
