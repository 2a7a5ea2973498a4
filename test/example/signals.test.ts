/**
 * The demo as `npm start` runs it: a separate process (here from the sources through the suite's TypeScript loader, test/helpers/ts-loader.mjs)
 * that prints where to open it, serves, and on Ctrl-C (SIGINT) stops everything it started and exits 0.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { isListening } from '../helpers/demo.js'

t.test('Ctrl-C stops the demo, its dev and local OAuth2 servers, and exits 0', async (t) => {
  const child = spawn(process.execPath, ['--import=./test/helpers/ts-loader.mjs', 'example/server.ts'], {
    env: { ...process.env, PORT: '0', DEV_AUTH_PORT: '0', CUSTOM_AUTH_PORT: '0', AVATAR_STORE: 'memory://' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let out = ''
  let err = ''
  child.stderr.on('data', (d: Buffer) => { err += d.toString() })
  const banner = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (/demo: dev OAuth2 server .*\n/.test(out)) resolve(out)
    })
    child.once('exit', (code) => reject(new Error(`demo exited (${code}) before it started: ${err}`)))
  })
  const text = await banner
  const url = /demo: open (http:\S+)\//.exec(text)![1]!
  const dev = /dev OAuth2 server (http:\S+),/.exec(text)![1]!
  const custom = /local OAuth2 server \(custom\) (http:\S+)/.exec(text)![1]!
  t.match(text, /demo: providers on: local, dev, email, emailcode, custom/)
  const ports = [url, dev, custom].map((u) => Number(new URL(u).port))
  t.equal(await (await fetch(`http://127.0.0.1:${ports[0]}/ping`)).text(), 'pong')
  for (const port of ports) t.ok(await isListening(port), `${port} listening`)

  child.kill('SIGINT')
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 0, 'exit code 0')
  t.match(out, /demo: SIGINT, stopping/)
  t.match(err, /^demo: warning: AUTH_SECRET is not set/m, 'the warning went to stderr')
  for (const port of ports) t.notOk(await isListening(port), `${port} released`)
})
