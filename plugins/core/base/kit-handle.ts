/**
 * The provider kit's factory, set by kit.ts when it loads (the root plugin loads it on registration): what the root
 * entry's deprecated `providerKit` calls, so that importing the root entry does not load the core for it.
 */
import type { FastifyInstance } from 'fastify'

export const kitHandle: { providerKit?: ((fastify: FastifyInstance, who?: string) => unknown) | undefined } = {}
