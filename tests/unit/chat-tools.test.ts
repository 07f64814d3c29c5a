import { describe, expect, it } from 'vitest'
import { chartAxes, chatToolCall, writeResultSentence, writeSentence } from '#shared/utils/chat-tools'
import { resultMatches } from '../../scripts/eval-chat/compare'

const projectId = '00000000-0000-4000-8000-000000000101'
const taskId = '00000000-0000-4000-8000-000000000201'

describe('chat tool calls as sentences', () => {
  it('words creates, updates and deletes with the names the server resolved', () => {
    expect(writeSentence('create', 'tasks', { title: 'Write the launch post', project_id: projectId }, { [projectId]: 'Website relaunch' }))
      .toBe('Create task \'Write the launch post\' in project Website relaunch?')
    expect(writeSentence('create', 'projects', { name: 'Mobile app', status: 'active' })).toBe('Create project \'Mobile app\' with status active?')
    expect(writeSentence('update', 'tasks', { id: taskId, status: 'done', priority: 1 }, { [taskId]: 'Launch checklist' }))
      .toBe('Change task \'Launch checklist\': status to done, priority to 1?')
    expect(writeSentence('delete', 'notes', { id: taskId })).toBe(`Delete the note ${taskId}?`)
    // an id nobody could name (another team's, or none) is never shown as a name
    expect(writeSentence('create', 'tasks', { title: 'X', assignee_id: taskId })).toBe('Create task \'X\' with assignee an unknown record?')
  })

  it('sums up a finished write', () => {
    expect(writeResultSentence('create', 'tasks', { record: { id: taskId, title: 'Write the launch post' } })).toBe('Created task \'Write the launch post\'')
    expect(writeResultSentence('delete', 'tasks', { deleted: taskId }, { [taskId]: 'Old task' })).toBe('Deleted task \'Old task\'')
  })

  it('reads a tool call by its name', () => {
    expect(chatToolCall('update_activity_log', { id: taskId })).toMatchObject({ kind: 'write', action: 'update', table: 'activity_log' })
    expect(chatToolCall('query_database', { sql: 'select 1' })).toMatchObject({ kind: 'query' })
    expect(chatToolCall('something_else', {})).toMatchObject({ kind: 'other' })
  })
})

describe('charts of query results', () => {
  it('draws a category and a number, also a count that node-postgres returns as text', () => {
    expect(chartAxes({ columns: ['status', 'count'], rows: [['todo', '5'], ['done', '3']], row_count: 2 })).toEqual({ category: 0, value: 1 })
    expect(chartAxes({ columns: ['priority', 'tasks'], rows: [[1, 2], [3, 4]], row_count: 2 })).toEqual({ category: 0, value: 1 })
  })

  it('falls back to the table without a number, or with one row', () => {
    expect(chartAxes({ columns: ['title', 'status'], rows: [['a', 'todo'], ['b', 'done']], row_count: 2 })).toBeNull()
    expect(chartAxes({ columns: ['status', 'count'], rows: [['todo', 5]], row_count: 1 })).toBeNull()
  })
})

describe('eval result comparison', () => {
  it('ignores row order, column names and extra columns, and normalises numbers', () => {
    expect(resultMatches([['todo', 5], ['done', 3]], [['3', 'done', 'x'], ['5', 'todo', 'y']])).toBe(true)
    expect(resultMatches([[2.7]], [['2.7000000000000000']])).toBe(true)
    expect(resultMatches([], [])).toBe(true)
  })

  it('misses other values, other row counts, and values split across rows', () => {
    expect(resultMatches([['todo', 5]], [['todo', 4]])).toBe(false)
    expect(resultMatches([['a']], [['a'], ['b']])).toBe(false)
    expect(resultMatches([['a', 1], ['b', 2]], [['a', 2], ['b', 1]])).toBe(false)
  })
})
