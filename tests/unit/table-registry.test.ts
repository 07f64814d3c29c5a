import { describe, expect, it } from 'vitest'
import { databaseErrorMessage } from '../../server/utils/records/database-errors'
import { recordSchemas } from '../../server/utils/records/record-input'
import { insertStatement } from '../../server/utils/records/record-sql'
import { checkAllowedValues, quoteIdent, type TableInfo } from '../../server/utils/records/table-registry'

const column = (name: string, type: string, extra: Partial<TableInfo['columns'][number]> = {}) => ({
  name, type, nullable: false, hasDefault: false, comment: null, allowedValues: null, references: null, ...extra,
})

const tasks: TableInfo = {
  name: 'tasks',
  comment: null,
  isDomain: true,
  columns: [
    column('id', 'uuid', { hasDefault: true }),
    column('team_id', 'uuid'),
    column('created_by', 'uuid'),
    column('title', 'text'),
    column('status', 'text', { hasDefault: true, allowedValues: ['todo', 'in_progress', 'done'] }),
    column('priority', 'integer', { hasDefault: true }),
    column('project_id', 'uuid', { nullable: true, references: { table: 'projects', column: 'id' } }),
    column('due_date', 'date', { nullable: true }),
    column('completed_at', 'timestamp with time zone', { nullable: true }),
    column('created_at', 'timestamp with time zone', { hasDefault: true }),
  ],
  checks: [
    { name: 'tasks_status_check', definition: 'CHECK ((status = ANY (ARRAY[\'todo\'::text, \'in_progress\'::text, \'done\'::text])))', columns: ['status'] },
    { name: 'tasks_done_has_completed_at', definition: 'CHECK (((status <> \'done\'::text) OR (completed_at IS NOT NULL)))', columns: ['status', 'completed_at'] },
  ],
}

describe('checkAllowedValues', () => {
  it('reads a single-column list CHECK as pg_get_constraintdef renders it', () => {
    expect(checkAllowedValues(tasks.checks[0]!.definition)).toEqual({ column: 'status', values: ['todo', 'in_progress', 'done'] })
  })

  it('keeps quotes inside values', () => {
    expect(checkAllowedValues('CHECK ((kind = ANY (ARRAY[\'it\'\'s\'::text, \'b\'::text])))')).toEqual({ column: 'kind', values: ['it\'s', 'b'] })
  })

  it('is null for ranges and compound CHECKs', () => {
    expect(checkAllowedValues('CHECK (((priority >= 1) AND (priority <= 5)))')).toBeNull()
    expect(checkAllowedValues(tasks.checks[1]!.definition)).toBeNull()
  })
})

describe('recordSchemas', () => {
  const { create, update } = recordSchemas(tasks)

  it('requires the not-null columns without a default on create', () => {
    expect(create.safeParse({}).error?.issues[0]?.path).toEqual(['title'])
    expect(create.parse({ title: 'x' })).toEqual({ title: 'x' })
    expect(update.parse({})).toEqual({})
  })

  it.each([
    [{ title: 'x', team_id: 'a' }, /^team_id: is a system column/],
    [{ title: 'x', id: 'a' }, /^id: is a system column/],
    [{ 'title': 'x', 'title; drop table tasks': 1 }, /^title; drop table tasks: is not a column of tasks/],
  ])('names an unknown or system field: %j', (input, message) => {
    const issue = create.safeParse(input).error!.issues[0]!
    expect(issue.message).toMatch(message)
  })

  it.each([
    [{ title: 1 }, 'title'],
    [{ title: 'x', status: 'nope' }, 'status'],
    [{ title: 'x', priority: 1.5 }, 'priority'],
    [{ title: 'x', priority: 2 ** 31 }, 'priority'],
    [{ title: 'x', project_id: 'not-a-uuid' }, 'project_id'],
    [{ title: 'x', due_date: '2026-13-45' }, 'due_date'],
    [{ title: 'x', completed_at: 'yesterday' }, 'completed_at'],
    [{ title: null }, 'title'],
  ])('refuses %j naming %s', (input, field) => {
    expect(create.safeParse(input).error!.issues[0]!.path).toEqual([field])
  })

  it('accepts null for nullable columns and typed values, a date and time as the same instant in UTC', () => {
    const input = { title: 'x', status: 'done', priority: 2, project_id: null, due_date: '2026-02-03', completed_at: '2026-02-03T12:00:00+02:00' }
    expect(create.parse(input)).toEqual({ ...input, completed_at: '2026-02-03T10:00:00.000Z' })
  })
})

describe('databaseErrorMessage', () => {
  it('names the column and says a single-column CHECK in words: the allowed values, a range, a length', () => {
    expect(databaseErrorMessage(tasks, { code: '23514', constraint: 'tasks_status_check' })).toBe('status: must be one of: todo, in_progress, done')
    const bounded = {
      ...tasks,
      checks: [...tasks.checks,
        { name: 'tasks_priority_check', definition: 'CHECK (((priority >= 1) AND (priority <= 5)))', columns: ['priority'] },
        { name: 'tasks_title_check', definition: 'CHECK (((char_length(title) >= 1) AND (char_length(title) <= 200)))', columns: ['title'] }],
    }
    expect(databaseErrorMessage(bounded, { code: '23514', constraint: 'tasks_priority_check' })).toBe('priority: must be an integer between 1 and 5')
    expect(databaseErrorMessage(bounded, { code: '23514', constraint: 'tasks_title_check' })).toBe('title: must be a string 1 to 200 characters long')
  })

  it('names the fields of a compound CHECK and says its rule in words, not in SQL', () => {
    expect(databaseErrorMessage(tasks, { code: '23514', constraint: 'tasks_done_has_completed_at' }))
      .toBe('status, completed_at: must satisfy status is not \'done\' or completed_at IS NOT NULL (violates tasks_done_has_completed_at)')
    const commented = { ...tasks, columns: tasks.columns.map(c => c.name === 'status' ? { ...c, comment: 'todo, in_progress or done; a done task must have completed_at.' } : c) }
    expect(databaseErrorMessage(commented, { code: '23514', constraint: 'tasks_done_has_completed_at' }))
      .toBe('status, completed_at: a done task must have completed_at (violates tasks_done_has_completed_at)')
  })

  it('maps not-null, foreign-key and value errors, and leaves others alone', () => {
    expect(databaseErrorMessage(tasks, { code: '23502', column: 'title' })).toBe('title: is required')
    expect(databaseErrorMessage(tasks, { code: '23503', constraint: 'tasks_project_id_fkey', detail: 'Key (project_id)=(x) is not present in table "projects".' }))
      .toMatch(/^project_id: references a record that does not exist/)
    expect(databaseErrorMessage(tasks, { code: '22P02', message: 'invalid input syntax for type uuid: "x"' })).toMatch(/invalid input syntax/)
    expect(databaseErrorMessage(tasks, { code: '22003', message: 'integer out of range' })).toMatch(/out of range/)
    expect(databaseErrorMessage(tasks, { code: '40001' })).toBeNull()
    expect(databaseErrorMessage(tasks, new Error('boom'))).toBeNull()
  })
})

describe('quoteIdent', () => {
  it('quotes and doubles embedded quotes', () => {
    expect(quoteIdent('tasks')).toBe('"tasks"')
    expect(quoteIdent('a"b')).toBe('"a""b"')
  })
})

describe('insertStatement', () => {
  const projects: TableInfo = { name: 'projects', comment: null, isDomain: true, checks: [], columns: [column('id', 'uuid', { hasDefault: true }), column('team_id', 'uuid'), column('name', 'text')] }
  const registry = new Map([['tasks', tasks], ['projects', projects]])
  const project = '00000000-0000-4000-8000-000000000001'
  const insert = (values: Record<string, unknown>, audited = true, upsert?: { id: string, action: 'update' | 'nothing' }) =>
    insertStatement(tasks, 'team', 'actor', values, audited, registry, upsert)

  it('makes the same text for values of the same shape, and numbers the values to match it', async () => {
    const first = await insert({ title: 'a', project_id: project })
    const second = await insert({ title: 'b', project_id: '00000000-0000-4000-8000-000000000002' })
    expect(second.sql).toBe(first.sql)
    expect(second.params).toEqual(['team', 'actor', 'b', '00000000-0000-4000-8000-000000000002'])
    expect(first.sql).toContain('exists (select 1 from public."projects" where "id" = $4 and team_id = $1)')
  })

  it('checks a reference only when it is given and not null; other columns make other texts', async () => {
    const withProject = await insert({ title: 'a', project_id: project })
    const withNull = await insert({ title: 'a', project_id: null })
    const without = await insert({ title: 'a' })
    const withPriority = await insert({ title: 'a', priority: 2 })
    expect(withNull.sql).not.toContain('exists')
    expect(without.sql).not.toContain('exists')
    expect(new Set([withProject.sql, withNull.sql, without.sql, withPriority.sql]).size).toBe(4)
    expect(withNull.params).toEqual(['team', 'actor', 'a', null])
    expect(withPriority.sql).toContain('"priority"')
  })

  it('keeps audited, plain and upsert texts apart', async () => {
    const audited = await insert({ title: 'a' })
    const plain = await insert({ title: 'a' }, false)
    const upsert = await insert({ title: 'a' }, false, { id: project, action: 'update' })
    const ignore = await insert({ title: 'a' }, false, { id: project, action: 'nothing' })
    expect(audited.sql).toContain('from audit_context')
    expect(plain.sql).not.toContain('audit_context')
    expect(upsert.sql).toContain('on conflict (id) do update')
    expect(ignore.sql).toContain('on conflict (id) do nothing')
    expect(upsert.params.at(-1)).toBe(project)
    expect(new Set([audited.sql, plain.sql, upsert.sql, ignore.sql]).size).toBe(4)
  })
})
