import { describe, expect, it } from 'vitest'
import { activityChanges, activityViewFromQuery, activityViewToQuery, formatValue } from '../../app/utils/activity'

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
})

describe('the Activity address', () => {
  it('round-trips filters and page, and ignores unknown values', () => {
    const query = activityViewToQuery({ source: 'api', table: 'tasks', action: 'delete' }, 3)
    expect(query).toEqual({ source: 'api', table: 'tasks', action: 'delete', page: '3' })
    expect(activityViewFromQuery(query)).toEqual({ filters: { source: 'api', table: 'tasks', action: 'delete' }, page: 3 })
    expect(activityViewFromQuery({ source: 'email', action: ['x'], page: '-2' }))
      .toEqual({ filters: { source: 'all', table: '', action: 'all' }, page: 1 })
    expect(activityViewToQuery({ source: 'all', table: '', action: 'all' }, 1)).toEqual({})
  })

  it('formats values for display', () => {
    expect([formatValue(null), formatValue('x'), formatValue(3), formatValue({ a: 1 })]).toEqual(['null', 'x', '3', '{"a":1}'])
  })
})
