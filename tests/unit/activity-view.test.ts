import { describe, expect, it } from 'vitest'
import { activityApiQuery, activityChanges, activityViewFromQuery, activityViewToQuery, emptyActivityFilters, formatValue } from '../../app/utils/activity'

describe('activityChanges', () => {
  it('gives old -> new per changed column for an update', () => {
    const changes = activityChanges({ action: 'update', old_data: { name: 'Old' }, new_data: { id: '1', name: 'New', webhook_url: null } })
    expect(changes).toEqual([{ column: 'name', before: 'Old', after: 'New' }])
  })

  it('gives the inserted values for an insert and the deleted values for a delete', () => {
    expect(activityChanges({ action: 'insert', old_data: null, new_data: { title: 'T', priority: 3 } }))
      .toEqual([{ column: 'title', after: 'T' }, { column: 'priority', after: 3 }])
    expect(activityChanges({ action: 'delete', old_data: { title: 'T' }, new_data: null }))
      .toEqual([{ column: 'title', before: 'T' }])
  })

  it('leaves out the columns the server sets (id, team_id, created_by, created_at, updated_at)', () => {
    const changes = activityChanges({
      action: 'insert',
      old_data: null,
      new_data: { id: '1', team_id: 't', created_by: 'u', created_at: 'x', updated_at: 'y', title: 'T' },
    })
    expect(changes).toEqual([{ column: 'title', after: 'T' }])
  })
})

describe('the Activity address', () => {
  it('round-trips filters and page, and ignores unknown values', () => {
    const filters = { ...emptyActivityFilters, source: 'api' as const, table: 'tasks', action: 'delete' as const, actor_id: 'u1', record_id: 'r1', from: '2026-01-02', to: '2026-01-31' }
    const query = activityViewToQuery(filters, 3)
    expect(query).toEqual({ source: 'api', table: 'tasks', action: 'delete', actor_id: 'u1', record_id: 'r1', from: '2026-01-02', to: '2026-01-31', page: '3' })
    expect(activityViewFromQuery(query)).toEqual({ filters, page: 3 })
    expect(activityViewFromQuery({ source: 'email', action: ['x'], page: '-2', from: 'yesterday' }))
      .toEqual({ filters: emptyActivityFilters, page: 1 })
    expect(activityViewToQuery(emptyActivityFilters, 1)).toEqual({})
  })

  it('turns days into a time range that includes the whole last day', () => {
    const query = activityApiQuery({ ...emptyActivityFilters, from: '2026-01-02', to: '2026-01-02' })
    expect(new Date(query.to!).getTime() - new Date(query.from!).getTime()).toBe(24 * 3_600_000)
    expect(new Date(query.from!).getDate()).toBe(2)
  })

  it('formats values for display, ids as the names they point at', () => {
    expect([formatValue(null), formatValue('x'), formatValue(3), formatValue({ a: 1 })]).toEqual(['empty', 'x', '3', '{"a":1}'])
    expect(formatValue('id-1', { 'id-1': 'Mia Member' })).toBe('Mia Member')
  })
})
