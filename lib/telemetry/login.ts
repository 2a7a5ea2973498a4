/**
 * A login request as telemetry sees it: a span `gatehouse.login.start` (a provider's `/login` and its further
 * steps) or `gatehouse.login.callback`, child of the request's span, and the request's handling timed into
 * `gatehouse.login.duration`. The outcome is the answer's: an error thrown, or a status of 400 and more, is a
 * failure.
 */
import { telemetry } from './api.js'
import { failSpan, inSpan } from './spans.js'
import { instruments } from './metrics.js'

/** The step of a login: `start` (`/login`), a further step's name (`options`), or `callback`. */
export type LoginStepName = string

/** Runs a login route's handler in its span and times it; just runs it when telemetry is off. */
export async function loginStep<T> (provider: string, step: LoginStepName, reply: { statusCode: number }, handle: () => Promise<T>): Promise<T> {
  if (telemetry.state === undefined) return await handle()
  const attributes = { 'gatehouse.provider': provider, 'gatehouse.login.step': step }
  const started = performance.now()
  let outcome = 'failure'
  try {
    const result = await inSpan(step === 'callback' ? 'gatehouse.login.callback' : 'gatehouse.login.start', attributes, async (span) => {
      const answered = await handle()
      if (span !== undefined && reply.statusCode >= 400) failSpan(span, String(reply.statusCode))
      return answered
    })
    if (reply.statusCode < 400) outcome = 'success'
    return result
  } finally {
    instruments.current?.loginDuration.record((performance.now() - started) / 1000, { ...attributes, 'gatehouse.outcome': outcome })
  }
}
