import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { twoAppsForFile } from '../support/file-hooks'
import { enrolTotp, signInPassword, totpCode } from '../support/factors'
import { Client, createTeam, signUp, uniqueEmail } from '../support/http'

// Two app processes on one Postgres database: a session ended through one is refused by the
// other at its very next request (each request reads its session's row).
let first: TestApp
let second: TestApp
twoAppsForFile((one, other) => {
  first = one
  second = other
})

/** The same cookie presented to the other process (a load balancer may send any request anywhere). */
function onOther(client: Client, app: TestApp): Client {
  const copy = new Client(app)
  copy.cookie = client.cookie
  return copy
}

describe('sessions across two app processes', () => {
  it('a session ended on one process is refused at once on the other', async () => {
    const email = uniqueEmail('two')
    const laptop = await signUp(first, { email, password: 'two instances pass' })
    const teamId = await createTeam(laptop, 'Two Instances')
    const { client: phone } = await signInPassword(first, email, 'two instances pass')
    const phoneElsewhere = onOther(phone, second)
    expect((await phoneElsewhere.get(`/api/teams/${teamId}/members`)).status).toBe(200)

    const phoneId = (await phoneElsewhere.get('/api/auth/sessions')).body.find((session: { current: boolean }) => session.current).id
    expect((await laptop.delete(`/api/auth/sessions/${phoneId}`)).status).toBe(204)
    const refused = await phoneElsewhere.get(`/api/teams/${teamId}/members`)
    expect(refused.status).toBe(401)
    expect(refused.body.code).toBe('session_ended')
    expect((await phone.get('/api/auth/me')).status).toBe(401)

    const { client: tablet } = await signInPassword(second, email, 'two instances pass')
    expect((await tablet.get('/api/auth/me')).status).toBe(200)
    expect((await onOther(laptop, second).post('/api/auth/sessions/revoke-others')).body).toEqual({ ended: 1 })
    expect((await onOther(tablet, first).get('/api/auth/me')).status).toBe(401)
  })

  it('the second step on one process, the level-1 cookie replayed on the other: refused', async () => {
    const email = uniqueEmail('two-mfa')
    const owner = await signUp(first, { email, password: 'two instances pass' })
    const { secret, factorId } = await enrolTotp(owner)
    const { client } = await signInPassword(second, email, 'two instances pass')
    const levelOne = onOther(client, first)
    expect((await levelOne.get('/api/auth/factors')).body.code).toBe('mfa_required')
    expect((await client.post('/api/auth/mfa/verify', { factor_id: factorId, code: totpCode(secret, 1) })).status).toBe(200)
    expect((await levelOne.get('/api/auth/me')).status).toBe(401)
    expect((await onOther(client, first).get('/api/auth/factors')).status).toBe(200)
  })
})
