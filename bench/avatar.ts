/**
 * Issue 5 benchmark: `GET {avatar.prefix}/<id>.image` from the lmdb and the file store, against @fastify/static
 * serving the same PNG bytes from disk (the baseline), in one run. Target: each store >= 1.0x the baseline.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import fastifyStatic from '@fastify/static'
import { authPlugin } from '../auth.js'
import { avatarIdOf, identiconPng } from '../plugins/avatar/plugin.js'
import { FileStore, LmdbStore, type AvatarStore } from '../stores/index.js'
import { measure, printTable } from './lib.js'

const SECRET = 'bench-secret-0123456789abcdef-0123456789abcdef'

async function gatehouse (store: string): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(authPlugin, { secret: () => SECRET, url: 'http://127.0.0.1', avatar: { store } })
  return app
}

async function fill (store: AvatarStore, id: string, bytes: Buffer): Promise<void> {
  await store.put(id, bytes)
  await store.close()
}

export async function benchAvatar (): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-avatar-'))
  try {
    const id = avatarIdOf('bench_user')
    const png = await identiconPng('bench_user')
    writeFileSync(join(dir, `${id}.png`), png)
    const filesRoot = join(dir, 'files')
    const lmdbFile = join(dir, 'avatars.db')
    await fill(new FileStore(filesRoot), id, png)
    await fill(new LmdbStore(lmdbFile), id, png)

    const staticApp = async (): Promise<FastifyInstance> => {
      const app = Fastify()
      await app.register(fastifyStatic, { root: dir, prefix: '/static/' })
      return app
    }
    const path = `/avatar/${id}.image`
    const base = { label: `@fastify/static, same ${png.length}-byte PNG`, rps: await measure('static', staticApp, { path: `/static/${id}.png` }) }
    const rows = [
      { label: 'avatar from lmdb store (bolt://)', rps: await measure('lmdb', () => gatehouse(`bolt://${lmdbFile}`), { path }), target: 1 },
      { label: 'avatar from file store (file://)', rps: await measure('file', () => gatehouse(`file://${filesRoot}`), { path }), target: 1 }
    ]
    printTable('avatar proxy: GET one avatar vs @fastify/static', base, rows)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
