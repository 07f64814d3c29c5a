import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startApp, type TestApp } from '../support/app'
import { KeyClient, createTeam, signUp } from '../support/http'
import { waitFor } from '../support/wait'

// Three app processes on one Postgres database serve one key. RateLimit-Remaining never says more
// than is left (the limit less the requests served so far, on every process), whatever the order
// in which the processes serve; and a key's new settings hold on every process within the key bounds.
const limit = 50
const apps: TestApp[] = []
beforeAll(async () => {
  const env = { API_RATE_LIMIT: String(limit), API_RATE_WINDOW_SECONDS: '86400' }
  apps.push(await startApp(env))
  for (let i = 0; i < 2; i++) apps.push(await startApp(env, { databaseUrl: apps[0]!.databaseUrl }))
})
afterAll(async () => {
  // the first one last: it drops the database
  for (const app of [...apps].reverse()) await app.stop()
})

async function newKey(name: string) {
  const owner = await signUp(apps[0]!)
  const teamId = await createTeam(owner, name)
  const created = (await owner.post(`/api/teams/${teamId}/api-keys`, { name })).body as { id: string, key: string }
  return { owner, teamId, ...created, clients: apps.map(app => new KeyClient(app, created.key)) }
}

/** Serves requests in the order `pick` gives until a 429; checks every answer's RateLimit-Remaining. */
async function serveUntilRefused(clients: KeyClient[], pick: (i: number) => number) {
  let served = 0
  for (let i = 0; i < limit + 10; i++) {
    const answer = await clients[pick(i)]!.get('/api/v1/tasks')
    if (answer.status === 429) return served
    expect(answer.status).toBe(200)
    served++
    const remaining = Number(answer.headers.get('ratelimit-remaining'))
    expect(remaining, `after ${served} requests served, request ${i} on process ${pick(i)}`).toBeLessThanOrEqual(limit - served)
    expect(remaining).toBeGreaterThanOrEqual(0)
  }
  throw new Error('the limit was never reached')
}

describe('the rate limit across three app processes', () => {
  it('never says more is left than is, taking turns', async () => {
    const { clients } = await newKey('Round robin')
    const served = await serveUntilRefused(clients, i => i % 3)
    expect(served).toBeLessThanOrEqual(limit)
  })

  it('never says more is left than is, in an uneven order', async () => {
    const { clients } = await newKey('Uneven')
    // runs of different lengths on each process, so that one process serves from an old block while the others claim
    const order = [0, 1, 2, 2, 1, 0, 0, 0, 1, 1, 2, 0, 2, 2, 2, 1, 0, 1]
    const served = await serveUntilRefused(clients, i => order[i % order.length]!)
    expect(served).toBeLessThanOrEqual(limit)
  })

  it('a key changed on one process holds on the others within the key bounds', async () => {
    const { owner, teamId, id, clients } = await newKey('Changed')
    for (const client of clients) expect((await client.get('/api/v1/projects')).status).toBe(200)
    const changed = await owner.put(`/api/teams/${teamId}/api-keys/${id}`, { scopes: { tasks: 'read' } })
    expect(changed.status).toBe(200)
    for (const client of clients) {
      await waitFor('the new scopes on every process', async () => (await client.get('/api/v1/projects')).status === 403)
      expect((await client.get('/api/v1/tasks')).status).toBe(200)
    }
  })
})
