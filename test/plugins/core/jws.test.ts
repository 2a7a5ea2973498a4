/**
 * decodeJws keeps parsed headers by their text (a verification then parses only the payload). The memo must not
 * change any answer: every header still decodes as itself past the memo's bound, a `crit` header is refused every
 * time, and the shared header object cannot be changed by one caller for the next.
 */
import t from 'tap'
import { decodeJws } from '../../../plugins/core/base/jws.js'

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url')
const token = (header: Record<string, unknown>, payload: Record<string, unknown> = { sub: 'x' }): string => `${b64(header)}.${b64(payload)}.c2ln`

t.test('200 distinct headers (past the memo bound) each decode as themselves, twice', async (t) => {
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 200; i++) {
      const d = decodeJws(token({ alg: 'HS256', typ: 'JWT', kid: `k${i}` }, { n: i }))
      t.equal(d?.header.kid, `k${i}`)
      t.equal(d?.payload.n, i)
    }
  }
})

t.test('a crit header is refused on every use, memoized or not', async (t) => {
  const crit = token({ alg: 'HS256', kid: 'c', crit: ['exp'] })
  t.equal(decodeJws(crit), null)
  t.equal(decodeJws(crit), null)
})

t.test('the shared header object is read-only', async (t) => {
  const tok = token({ alg: 'HS256', typ: 'JWT', kid: 'shared' })
  const first = decodeJws(tok)!
  t.throws(() => { (first.header as Record<string, unknown>).alg = 'none' })
  t.equal(decodeJws(tok)!.header.alg, 'HS256')
})
