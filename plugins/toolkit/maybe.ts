/**
 * `maybe` runs a hook only for requests a predicate selects; `reject` answers a fixed status and message for
 * them. Both come as hook functions (for route options, `wrap` and each other) and as plugins that install
 * the hook for every route of the encapsulation context they are registered in. A bad argument or option
 * throws an `OptionsError` naming it: `maybe.predicate`, `maybe.hook`, `reject.status`, … for the functions,
 * `maybe.when`, `maybe.stage`, `reject.when`, `reject.message`, … for the plugins.
 */
import fp from 'fastify-plugin'
import type { FastifyPluginAsync } from 'fastify'
import { OptionsError, sendError } from '../../lib/errors.js'
import { requireFunction, runHook, type RequestHook, type RequestPredicate, type ToolkitHook } from './hook.js'

/** Runs `hook` only when `predicate(request)` holds; otherwise the request passes untouched. */
export function maybe (predicate: RequestPredicate, hook: RequestHook): ToolkitHook {
  return maybeNamed(predicate, hook, 'maybe.predicate')
}

function maybeNamed (predicate: RequestPredicate, hook: RequestHook, predicateOption: string): ToolkitHook {
  requireFunction(predicateOption, predicate)
  requireFunction('maybe.hook', hook)
  return async function maybeHook (request, reply) {
    if (await predicate(request)) await runHook(this, hook, request, reply)
  }
}

/**
 * Answers `status` with `{error: message, code}` when `predicate(request)` holds; otherwise passes. The code
 * is the status's (`GATEHOUSE_FORBIDDEN` for 403, …).
 */
export function reject (predicate: RequestPredicate, status: number, message: string): ToolkitHook {
  return rejectNamed(predicate, status, message, 'reject.predicate')
}

function rejectNamed (predicate: RequestPredicate, status: number, message: string, predicateOption: string): ToolkitHook {
  requireFunction(predicateOption, predicate)
  checkStatus('reject.status', status)
  if (typeof message !== 'string' || message === '') throw new OptionsError('reject.message', 'must be a non-empty string')
  return async function rejectHook (request, reply) {
    // Waiting for the answer makes Fastify stop the chain even when an async onSend hook delays it.
    if (await predicate(request)) await sendError(reply, status, message)
  }
}

/** Which lifecycle stage a plugin form installs its hook at. */
export type HookStage = 'onRequest' | 'preHandler'

export interface MaybeOptions {
  /** Selects the requests the hook runs for. */
  when: RequestPredicate
  /** The hook to run (async or callback form). */
  hook: RequestHook
  /** Stage to install at; `preHandler` when the hook needs the parsed body. Default `onRequest`. */
  stage?: HookStage | undefined
}

export interface RejectOptions {
  /** Selects the requests to reject. */
  when: RequestPredicate
  /** Status to answer, 200..599. */
  status: number
  /** The `error` field of the JSON body. */
  message: string
  /** Stage to install at; `preHandler` when the predicate reads the parsed body. Default `onRequest`. */
  stage?: HookStage | undefined
}

const maybePluginImpl: FastifyPluginAsync<MaybeOptions> = async (fastify, opts) => {
  fastify.addHook(stageOf('maybe.stage', opts.stage), maybeNamed(opts.when, opts.hook, 'maybe.when'))
}

const rejectPluginImpl: FastifyPluginAsync<RejectOptions> = async (fastify, opts) => {
  fastify.addHook(stageOf('reject.stage', opts.stage), rejectNamed(opts.when, opts.status, opts.message, 'reject.when'))
}

/** Plugin form of `maybe`: `fastify.register(maybePlugin, { when, hook })`. */
export const maybePlugin = fp(maybePluginImpl, { name: 'gatehouse-maybe', fastify: '5.x' })
/** Plugin form of `reject`: `fastify.register(rejectPlugin, { when, status, message })`. */
export const rejectPlugin = fp(rejectPluginImpl, { name: 'gatehouse-reject', fastify: '5.x' })

function stageOf (option: string, stage: HookStage | undefined): HookStage {
  if (stage === undefined) return 'onRequest'
  if (stage !== 'onRequest' && stage !== 'preHandler') throw new OptionsError(option, 'must be "onRequest" or "preHandler"')
  return stage
}

/** 1xx answers carry no body, so the smallest status a JSON answer can use is 200. */
export function checkStatus (name: string, status: unknown): void {
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    throw new OptionsError(name, 'must be an integer status from 200 to 599')
  }
}
