import { describe, expect, it } from 'vitest'
import type { TestApp } from '../support/app'
import { appWithTeamForFile } from '../support/file-hooks'
import type { TeamFixture } from '../support/http'

let app: TestApp
let fx: TeamFixture
appWithTeamForFile({}, (started) => {
  ({ app, team: fx } = started)
})

describe('activity log', () => {
  it('records a rename by a session as one entry with the actor, source web and the changed values', async () => {
    const before = await fx.owner.get(`/api/teams/${fx.teamId}`)
    await fx.admin.patch(`/api/teams/${fx.teamId}`, { name: 'After Rename' })
    const answer = await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=teams&action=update`)
    expect(answer.status).toBe(200)
    expect(answer.body.total).toBe(1)
    expect(answer.body.entries[0]).toMatchObject({
      team_id: fx.teamId,
      actor_id: fx.admin.user!.id,
      actor_name: 'Adam Admin',
      source: 'web',
      source_ref: null,
      table_name: 'teams',
      record_id: fx.teamId,
      action: 'update',
      old_data: { name: before.body.name },
      new_data: expect.objectContaining({ name: 'After Rename' }),
    })
  })

  it('writes nothing for an update that changes nothing', async () => {
    const current = (await fx.owner.get(`/api/teams/${fx.teamId}`)).body
    const count = async () => (await fx.owner.get(`/api/teams/${fx.teamId}/activity?table=teams`)).body.total
    const before = await count()
    expect((await fx.owner.patch(`/api/teams/${fx.teamId}`, { name: current.name })).status).toBe(200)
    expect(await count()).toBe(before)
  })

  it('leaves no entry when the write fails', async () => {
    const before = await app.db.query('select count(*)::int as n from public.activity_log')
    // the database refuses this URL (check constraint), so the update and its log entry roll back together
    await expect(app.db.query(`update public.teams set webhook_url = 'javascript:alert(1)' where id = $1`, [fx.teamId])).rejects.toThrow()
    const failing = await fx.owner.patch(`/api/teams/${fx.teamId}`, { name: 'x'.repeat(101) })
    expect(failing.status).toBe(400)
    const after = await app.db.query('select count(*)::int as n from public.activity_log')
    expect(after.rows[0].n).toBe(before.rows[0].n)
  })

  it('filters by source, table, actor and action, and pages newest first', async () => {
    for (let i = 0; i < 4; i++) await fx.owner.patch(`/api/teams/${fx.teamId}`, { name: `Name ${i}` })
    const all = await fx.owner.get(`/api/teams/${fx.teamId}/activity?actor_id=${fx.owner.user!.id}&table=teams&action=update&source=web`)
    expect(all.body.total).toBe(4)
    expect(all.body.entries.map((e: { new_data: { name: string } }) => e.new_data.name)).toEqual(['Name 3', 'Name 2', 'Name 1', 'Name 0'])
    const page = await fx.owner.get(`/api/teams/${fx.teamId}/activity?actor_id=${fx.owner.user!.id}&table=teams&action=update&source=web&limit=2&offset=1`)
    expect(page.body.entries.map((e: { new_data: { name: string } }) => e.new_data.name)).toEqual(['Name 2', 'Name 1'])
    expect(page.body.total).toBe(all.body.total)
    const none = await fx.owner.get(`/api/teams/${fx.teamId}/activity?source=api`)
    expect(none.body).toEqual({ entries: [], total: 0, names: {} })
  })

  it.each([
    ['limit=0', /^limit:/], ['limit=101', /^limit:/], ['limit=abc', /^limit:/], ['offset=-1', /^offset:/],
    ['offset=1.5', /^offset:/], ['source=email', /^source:/], ['action=drop', /^action:/],
    ['actor_id=1', /^actor_id:/], [`table=${encodeURIComponent('teams; drop table teams')}`, /^table:/],
  ])('answers 400 for ?%s', async (query, message) => {
    const answer = await fx.owner.get(`/api/teams/${fx.teamId}/activity?${query}`)
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatch(message)
  })

  it('is for owners and admins of the team only', async () => {
    expect((await fx.admin.get(`/api/teams/${fx.teamId}/activity`)).status).toBe(200)
    expect((await fx.member.get(`/api/teams/${fx.teamId}/activity`)).status).toBe(403)
    expect((await fx.outsider.get(`/api/teams/${fx.teamId}/activity`)).status).toBe(404)
    expect((await fx.anonymous.get(`/api/teams/${fx.teamId}/activity`)).status).toBe(401)
    // the outsider's own team's activity never shows this team's entries
    const outsiderTeam = (await fx.outsider.get('/api/auth/me')).body.current_team_id
    const theirs = await fx.outsider.get(`/api/teams/${outsiderTeam}/activity`)
    expect(theirs.body.entries.every((e: { team_id: string }) => e.team_id === outsiderTeam)).toBe(true)
  })
})
