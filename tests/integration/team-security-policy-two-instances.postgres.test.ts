import { enrolTotp } from '../support/factors'
import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { twoAppsForFile } from '../support/file-hooks'
import { Client, KeyClient, addMember, createTeam, signUp } from '../support/http'
import { waitFor } from '../support/wait'

// Two app processes on one Postgres: each keeps the keys it has verified in memory. A policy turned
// on through one, and a member enrolling through one, reach the other by notification, within the
// key bounds (a second here; 5 s without the notification connection). Members enrol an
// authenticator app through the first process's routes.
let first: TestApp
let second: TestApp
twoAppsForFile((one, other) => {
  first = one
  second = other
})

/** Enrols an authenticator app through the account's own routes, as the member would. */
async function enrol(user: Client): Promise<void> {
  await enrolTotp(user)
}

describe('the two-factor policy across two app processes', () => {
  it('refuses a non-compliant member\'s cached key on the other process, and lets it in there once the member enrols', async () => {
    const owner = await signUp(first, { name: 'Olive Owner' })
    const teamId = await createTeam(owner, 'Two Instances')
    const admin = await signUp(first, { name: 'Adam Admin' })
    await addMember(first, teamId, admin, 'admin')
    const created = await admin.post(`/api/teams/${teamId}/api-keys`, { name: 'Shared' })
    expect(created.status).toBe(201)
    const onFirst = new KeyClient(first, created.body.key)
    const onSecond = new KeyClient(second, created.body.key)
    // both processes have the key in memory
    expect((await onFirst.get('/api/v1/tasks')).status).toBe(200)
    expect((await onSecond.get('/api/v1/tasks')).status).toBe(200)

    await enrol(owner)
    expect((await owner.put(`/api/teams/${teamId}/security-policy`, { require_two_factor: 'admins', grace_days: 0 })).status).toBe(200)
    // the process that changed the policy refuses at once; the other once notified
    expect((await onFirst.get('/api/v1/tasks')).body.code).toBe('two_factor_required')
    await waitFor('the other process to refuse the key', async () => (await onSecond.get('/api/v1/tasks')).status === 401, { timeoutMs: 5_000 })
    expect((await onSecond.get('/rest/v1/tasks')).body.code).toBe('two_factor_required')
    const adminOnSecond = new Client(second)
    adminOnSecond.cookie = admin.cookie
    expect((await adminOnSecond.get(`/api/teams/${teamId}`)).body.code).toBe('two_factor_required')

    await enrol(admin)
    await waitFor('the other process to serve the key again', async () => (await onSecond.get('/api/v1/tasks')).status === 200, { timeoutMs: 5_000 })
    expect((await onFirst.get('/api/v1/tasks')).status).toBe(200)
    // the first factor raised the admin's session under a new id and ended the old one
    expect((await adminOnSecond.get(`/api/teams/${teamId}`)).status).toBe(401)
    adminOnSecond.cookie = admin.cookie
    expect((await adminOnSecond.get(`/api/teams/${teamId}`)).status).toBe(200)
  })
})
