import { describe, expect, it } from 'vitest'
import { checkChatSql } from '../../server/utils/chat/sql-guard'
import { hiddenTableSpellings, hostileStatements, otherTeamPlaceholder } from './sql-guard-corpus'

const tables = new Set(['projects', 'tasks', 'notes', 'activity_log'])
const otherTeam = '7d3c1b9e-8f1a-4c2b-9d5e-0a1b2c3d4e5f'

describe('the chat SQL guard', () => {
  it('has a corpus of at least 40 hostile statements', () => {
    expect(hostileStatements.length).toBeGreaterThanOrEqual(40)
  })

  it.each(hostileStatements)('refuses: $name', async ({ sql }) => {
    const verdict = await checkChatSql(sql.replaceAll(otherTeamPlaceholder, otherTeam), tables)
    expect(verdict.ok).toBe(false)
    if (!verdict.ok) expect(verdict.reason).not.toBe('')
  })

  it.each([
    ['a plain select', 'select title, status from tasks where status = \'todo\' order by created_at desc limit 10'],
    ['a join with aggregates', 'select p.name, count(t.id) filter (where t.status = \'done\') as done from projects p left join tasks t on t.project_id = p.id group by p.name'],
    ['a CTE and a window function', 'with recent as (select * from notes where created_at > now() - interval \'7 days\') select title, row_number() over (order by created_at) from recent'],
    ['a recursive CTE', 'with recursive n(i) as (select 1 union all select i + 1 from n where i < 5) select i from n'],
    ['SQL-syntax functions', 'select extract(year from due_date), substring(title from 1 for 3), trim(title), now() at time zone \'utc\', current_date from tasks'],
    ['the activity log', 'select source, source_ref, count(*) from public.activity_log group by 1, 2'],
    ['a trailing semicolon and comment', 'select count(*) from tasks; -- how many?'],
    ['VALUES', 'values (1, \'a\'), (2, \'b\')'],
    ['casts to plain types', 'select priority::text, due_date::timestamptz, \'3\'::int from tasks'],
  ])('allows %s', async (_name, sql) => {
    const verdict = await checkChatSql(sql, tables)
    expect(verdict).toMatchObject({ ok: true })
  })

  it('returns the one statement without its trailing semicolon', async () => {
    expect(await checkChatSql('  select 1 as x ;  ', tables)).toEqual({ ok: true, sql: 'select 1 as x' })
  })

  it('refuses a table the user may not view, naming the tables it can', async () => {
    const verdict = await checkChatSql('select * from activity_log', new Set(['tasks', 'notes']))
    expect(verdict).toEqual({ ok: false, reason: expect.stringContaining('tables you can query: notes, tasks') })
  })

  it.each(hiddenTableSpellings)('refuses a table the user may not view, spelled as: $name', async ({ sql }) => {
    const verdict = await checkChatSql(sql, new Set(['projects', 'tasks', 'notes']))
    expect(verdict).toEqual({ ok: false, reason: expect.stringMatching(/^the table (public\.)?activity_log is not available; tables you can query: notes, projects, tasks$/) })
  })

  it.each([
    ['a CTE named after the table it narrows', 'with tasks as (select * from tasks where status = \'todo\') select * from tasks'],
    ['a CTE reading an earlier sibling', 'with a as (select id from tasks), b as (select * from a) select * from b'],
    ['a recursive CTE reading itself', 'with recursive activity_log(i) as (select 1 union all select i + 1 from activity_log where i < 3) select * from activity_log'],
    ['a CTE used inside a subquery', 'with done as (select id from tasks where status = \'done\') select * from notes where exists (select 1 from done)'],
  ])('resolves names as Postgres does: allows %s', async (_name, sql) => {
    expect(await checkChatSql(sql, new Set(['projects', 'tasks', 'notes']))).toMatchObject({ ok: true })
  })

  it('refuses a NUL character before parsing, telling the model to remove it', async () => {
    expect(await checkChatSql('select \'a\u0000b\' from tasks', tables)).toEqual({ ok: false, reason: expect.stringMatching(/NUL character.*remove it/) })
  })

  it('lets a CTE shadow nothing outside its own scope', async () => {
    const verdict = await checkChatSql('select * from (with secrets as (select 1) select * from secrets) a, secrets', tables)
    expect(verdict.ok).toBe(false)
  })

  it('explains why, for the model to correct itself', async () => {
    expect(await checkChatSql('select pg_sleep(1)', tables)).toEqual({ ok: false, reason: 'the function pg_sleep is not allowed' })
    expect(await checkChatSql('select * from tasks for update', tables)).toEqual({ ok: false, reason: 'locking clauses (FOR UPDATE, FOR SHARE, ...) are not allowed' })
    expect(await checkChatSql('delete from tasks', tables)).toEqual({ ok: false, reason: 'only SELECT is allowed, not DELETE' })
  })
})
