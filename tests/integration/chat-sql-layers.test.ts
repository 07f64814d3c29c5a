import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../server/utils/db/db-drivers'
import { checkChatSql } from '../../server/utils/chat/sql-guard'
import { ChatQueryRefused, defaultChatQueryLimits, executeChatStatement, runChatQuery, type ChatQueryTarget } from '../../server/utils/chat/query-runner'
import { databaseKind, freshDatabase } from '../support/database'
import { hiddenTableSpellings, hostileStatements, otherTeamPlaceholder } from '../unit/sql-guard-corpus'

// What the database layer alone lets through (no other team's rows, nothing written, only a
// read that the parser refuses): reads of the catalog and of the chat's own team setting, and an
// advisory lock that the runner releases after the statement. Each is named here, and the guard
// is shown to refuse it. (Column statistics are not among them: PUBLIC may not read pg_stats,
// which would show sampled values of every team once ANALYZE has run.)
const parserOnly: Record<'pglite' | 'postgres', string[]> = {
  postgres: [
    'user list', 'relation list', 'information schema', 'other sessions\' queries',
    'regclass cast', 'reading the team setting', 'calling current_chat_team to compare', 'query_to_xml',
    'advisory lock',
  ],
  // PGlite runs in one thread without timers: statement_timeout never fires there
  pglite: [
    'user list', 'relation list', 'information schema', 'other sessions\' queries',
    'regclass cast', 'reading the team setting', 'calling current_chat_team to compare', 'query_to_xml',
    'advisory lock', 'sleep', 'sleep in VALUES', 'sleep in a WHERE',
  ],
}

const kind = databaseKind()
// Tests that only make sense on one database are registered only there (not reported as skipped).
const noop = () => {}
const itOn = (only: typeof kind) => (kind === only ? it : noop) as typeof it
const describeOn = (only: typeof kind) => (kind === only ? describe : noop) as typeof describe
const tables = new Set(['projects', 'tasks', 'notes', 'activity_log'])
let db: Database
let close: () => Promise<void>
let target: ChatQueryTarget
let chatPool: pg.Pool | undefined
let teamA: string
let teamB: string

async function makeTeamWithRows(label: string): Promise<string> {
  const { rows: [user] } = await db.query<{ id: string }>(`insert into auth.users (email) values ($1) returning id`, [`${label}-${Date.now()}@example.com`])
  await db.query('insert into public.profiles (id, email, name) values ($1, $2, $3)', [user!.id, `${label}@example.com`, label])
  const { rows: [team] } = await db.query<{ id: string }>('insert into public.teams (name) values ($1) returning id', [label])
  await db.query(`insert into public.team_members (team_id, user_id, role) values ($1, $2, 'owner')`, [team!.id, user!.id])
  const { rows: [project] } = await db.query<{ id: string }>(
    'insert into public.projects (team_id, created_by, name) values ($1, $2, $3) returning id', [team!.id, user!.id, `${label}-SECRET project`])
  await db.query('insert into public.tasks (team_id, created_by, title, project_id) values ($1, $2, $3, $4)', [team!.id, user!.id, `${label}-SECRET task`, project!.id])
  await db.query('insert into public.notes (team_id, created_by, title) values ($1, $2, $3)', [team!.id, user!.id, `${label}-SECRET note`])
  return team!.id
}

async function snapshot() {
  const { rows } = await db.query<{ state: string }>(`select
    (select string_agg(title, ',' order by title) from public.tasks) || '|' ||
    (select string_agg(title, ',' order by title) from public.notes) || '|' ||
    (select string_agg(name, ',' order by name) from public.projects) || '|' ||
    (select count(*) from public.activity_log)::text || '|' ||
    (select count(*) from pg_class where relname = 'stolen')::text as state`)
  return rows[0]!.state
}

beforeAll(async () => {
  ({ db, close } = await freshDatabase())
  teamA = await makeTeamWithRows('TEAM-A')
  teamB = await makeTeamWithRows('TEAM-B')
  for (const team of [teamA, teamB]) {
    await db.query(`insert into public.activity_log (team_id, source, table_name, record_id, action, new_data, old_data)
      values ($1, 'system', 'tasks', 'x', 'delete', '{"title": "AUDIT-SECRET"}', '{"title": "AUDIT-SECRET"}')`, [team])
  }
  if (db.kind === 'postgres') {
    const { rows } = await db.query<{ url: string }>('select current_database() as url')
    const url = new URL(process.env.TEST_DATABASE_URL!)
    url.pathname = `/${rows[0]!.url}`
    url.username = 'chat_gateway'
    chatPool = new pg.Pool({ connectionString: url.toString(), max: 2 })
    target = { kind: 'postgres', pool: chatPool }
  }
  else {
    target = { kind: 'pglite', pglite: db.pglite! }
  }
})
afterAll(async () => {
  await chatPool?.end()
  await close?.()
})

describe(`the database layer alone, bypassing the parser (${kind})`, () => {
  it('keeps every hostile statement inside the team and read-only, and names what only the parser stops', async () => {
    const before = await snapshot()
    const letThrough: string[] = []
    for (const statement of hostileStatements) {
      // shown below with a short sleep instead of waiting for these to end
      if (kind === 'pglite' && statement.name.startsWith('sleep')) {
        letThrough.push(statement.name)
        continue
      }
      const sql = statement.sql.replaceAll(otherTeamPlaceholder, teamB)
      const limits = { ...defaultChatQueryLimits, statementTimeoutMs: 500, lockTimeoutMs: 200 }
      const outcome = await executeChatStatement(target, sql, { teamId: teamA, tables }, limits).then(result => result, (error: Error) => error)
      if (outcome instanceof Error) continue
      letThrough.push(statement.name)
      const seen = JSON.stringify(outcome.rows)
      expect(seen, statement.name).not.toContain('TEAM-B')
      expect(seen, statement.name).not.toContain(teamB)
    }
    expect(await snapshot()).toBe(before)
    // pg_locks shows the whole server: only this file's database counts (other files running at the
    // same time hold advisory locks of their own, e.g. the activity-retention job's)
    const { rows: locks } = await db.query<{ n: number }>(
      `select count(*)::int as n from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`,
    )
    expect(locks[0]!.n).toBe(0)
    expect(letThrough.sort()).toEqual([...parserOnly[kind]].sort())
    for (const name of letThrough) {
      const statement = hostileStatements.find(s => s.name === name)!
      expect(await checkChatSql(statement.sql, tables), name).toMatchObject({ ok: false })
    }
  })

  it('refuses column statistics, which would show sampled values of other teams after ANALYZE', async () => {
    await db.query('analyze public.tasks')
    const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from pg_stats where tablename = 'tasks'`)
    expect(rows[0]!.n).toBeGreaterThan(0)
    await expect(executeChatStatement(target, `select most_common_vals::text from pg_stats where tablename = 'tasks'`, { teamId: teamA, tables }))
      .rejects.toThrow(/permission denied/)
  })

  it('shows only the chat team\'s rows, whatever the WHERE clause says', async () => {
    const all = await executeChatStatement(target, 'select title from tasks union all select title from notes union all select name from projects', { teamId: teamA, tables })
    expect(all.rows.flat().sort()).toEqual(['TEAM-A-SECRET note', 'TEAM-A-SECRET project', 'TEAM-A-SECRET task'])
    const other = await executeChatStatement(target, `select * from tasks where team_id = '${teamB}'`, { teamId: teamA, tables })
    expect(other.rowCount).toBe(0)
    const seenByB = await executeChatStatement(target, 'select title from tasks', { teamId: teamB, tables })
    expect(seenByB.rows).toEqual([['TEAM-B-SECRET task']])
  })

  itOn('pglite')('lets a sleep run past the statement timeout on PGlite, where only the parser stops it', async () => {
    const started = Date.now()
    const result = await executeChatStatement(target, 'select pg_sleep(0.5)', { teamId: teamA, tables }, { ...defaultChatQueryLimits, rowLimit: 10, statementTimeoutMs: 100, lockTimeoutMs: 100 })
    expect(result.rowCount).toBe(1)
    expect(Date.now() - started).toBeGreaterThanOrEqual(450)
    expect(await checkChatSql('select pg_sleep(0.5)', tables)).toMatchObject({ ok: false })
  })

  itOn('postgres')('stops a statement at the statement timeout', async () => {
    const started = Date.now()
    await expect(executeChatStatement(target, 'select pg_sleep(5)', { teamId: teamA, tables }, { ...defaultChatQueryLimits, rowLimit: 10, statementTimeoutMs: 300, lockTimeoutMs: 100 }))
      .rejects.toThrow(/statement timeout/)
    expect(Date.now() - started).toBeLessThan(4000)
  })

  it('caps the rows and tells the model to narrow the query', async () => {
    const result = await executeChatStatement(target, 'select i from generate_series(1, 250) i', { teamId: teamA, tables }, { ...defaultChatQueryLimits, statementTimeoutMs: 2000, lockTimeoutMs: 100 })
    expect(result.rowCount).toBe(100)
    expect(result.rows.at(-1)).toEqual([100])
    expect(result.truncated).toMatch(/more than 100 rows.*Narrow the query/)
  })
})

describe(`the database layer repeats the user's table permissions (${kind})`, () => {
  const memberTables = new Set(['projects', 'tasks', 'notes'])

  it('answers no activity log row to a user who may not view it, however the statement names the table', async () => {
    for (const statement of [...hiddenTableSpellings, { name: 'plain read', sql: 'select * from activity_log' }]) {
      const outcome = await executeChatStatement(target, statement.sql, { teamId: teamA, tables: memberTables }).then(result => result, (error: Error) => error)
      // an error is Postgres itself refusing the statement (a recursive term it cannot take, ...)
      if (outcome instanceof Error) continue
      expect(JSON.stringify(outcome.rows), statement.name).not.toContain('AUDIT-SECRET')
      expect(JSON.stringify(outcome.rows), statement.name).not.toContain(teamA)
    }
  })

  it('answers the log to a user who may view it, only the team\'s', async () => {
    const result = await executeChatStatement(target, 'with activity_log as (select * from activity_log) select old_data->>\'title\' from activity_log where action = \'delete\'', { teamId: teamA, tables })
    expect(result.rows).toEqual([['AUDIT-SECRET']])
    const plain = await executeChatStatement(target, 'select count(*) from activity_log where action = \'delete\'', { teamId: teamB, tables })
    expect(plain.rows).toEqual([[1]])
  })

  it('shows a table only when it is named in the user\'s tables, and refuses to set them from a statement', async () => {
    const noTasks = await executeChatStatement(target, 'select count(*) from tasks', { teamId: teamA, tables: new Set(['notes']) })
    expect(noTasks.rows).toEqual([[0]])
    await expect(executeChatStatement(target, `select set_config('app.chat_tables', 'activity_log', true), count(*) from activity_log`, { teamId: teamA, tables: memberTables }))
      .rejects.toThrow(/permission denied/)
  })
})

describe(`the cost guard (${kind})`, () => {
  // each row of the cross join would divide by zero: had the statement run, it would answer that error
  const crossJoin = 'select a.priority / (a.priority - a.priority) from tasks a, tasks b, tasks c, tasks d, tasks e'
  let teamC: string

  beforeAll(async () => {
    // the planner estimates the chat team's own rows (its id is known at planning): a team of 61 tasks
    teamC = await makeTeamWithRows('TEAM-C')
    const { rows: [owner] } = await db.query<{ id: string }>('select created_by as id from public.tasks where team_id = $1', [teamC])
    await db.query(`insert into public.tasks (team_id, created_by, title) select $1, $2, 'filler ' || i from generate_series(1, 60) i`, [teamC, owner!.id])
    await db.query('analyze')
  })

  it('refuses a statement whose planned cost is over the limit, without running it', async () => {
    const refusal = await runChatQuery(target, crossJoin, teamC, tables, defaultChatQueryLimits).then(() => undefined, (error: Error) => error)
    expect(refusal).toBeInstanceOf(ChatQueryRefused)
    expect(refusal!.message).toMatch(/^the statement is too expensive to run: its estimated cost is \d+ and the limit is 100000\. .*WHERE.*LIMIT/)
    expect(Number(refusal!.message.match(/cost is (\d+)/)![1])).toBeGreaterThan(100_000)
    // with a higher limit the same statement runs, and fails at its first row
    await expect(executeChatStatement(target, crossJoin, { teamId: teamC, tables }, { ...defaultChatQueryLimits, maxCost: Number.MAX_SAFE_INTEGER }))
      .rejects.toThrow(/division by zero/)
  })

  it('runs a normal query under the limit', async () => {
    const result = await runChatQuery(target, 'select t.title, p.name from tasks t join projects p on p.id = t.project_id order by t.title limit 10', teamC, tables, defaultChatQueryLimits)
    expect(result.rows).toEqual([['TEAM-C-SECRET task', 'TEAM-C-SECRET project']])
    const count = await runChatQuery(target, 'select count(*) from tasks a, tasks b', teamC, tables, defaultChatQueryLimits)
    expect(count.rows).toEqual([[61 * 61]])
  })

  it('takes its limit from the limits given', async () => {
    await expect(runChatQuery(target, 'select count(*) from tasks', teamA, tables, { ...defaultChatQueryLimits, maxCost: 0.001 }))
      .rejects.toThrow(/too expensive.*the limit is 0.001/)
  })
})

describe(`a NUL character in a statement (${kind})`, () => {
  it('is refused by both layers, and the connection stays usable', async () => {
    await expect(runChatQuery(target, 'select \'a\u0000b\' from tasks', teamA, tables, defaultChatQueryLimits)).rejects.toThrow(/NUL character/)
    await expect(executeChatStatement(target, 'select \'a\u0000b\' from tasks', { teamId: teamA, tables })).rejects.toThrow(/NUL character/)
    expect((await executeChatStatement(target, 'select count(*) from tasks', { teamId: teamA, tables })).rows).toEqual([[1]])
  })
})

describe(`query_database with both layers (${kind})`, () => {
  it('answers a read of the team\'s rows', async () => {
    const result = await runChatQuery(target, 'select status, count(*) as n from tasks group by status;', teamA, tables, defaultChatQueryLimits)
    expect(result).toEqual({ columns: ['status', 'n'], rows: [['todo', 1]], rowCount: 1 })
  })

  it('refuses every hostile statement before it reaches the database', async () => {
    for (const statement of hostileStatements) {
      await expect(runChatQuery(target, statement.sql.replaceAll(otherTeamPlaceholder, teamB), teamA, tables, defaultChatQueryLimits), statement.name)
        .rejects.toBeInstanceOf(ChatQueryRefused)
    }
  })
})

describeOn('postgres')('the chat pool\'s login role', () => {
  it('is no superuser, owns nothing and belongs to chat_reader only', async () => {
    const { rows: [role] } = await db.query<{ rolsuper: boolean, rolinherit: boolean, rolcreaterole: boolean, rolcreatedb: boolean, rolbypassrls: boolean }>(
      `select rolsuper, rolinherit, rolcreaterole, rolcreatedb, rolbypassrls from pg_roles where rolname = 'chat_gateway'`)
    expect(role).toEqual({ rolsuper: false, rolinherit: false, rolcreaterole: false, rolcreatedb: false, rolbypassrls: false })
    const { rows: memberships } = await db.query<{ rolname: string }>(
      `select r.rolname from pg_auth_members m join pg_roles r on r.oid = m.roleid join pg_roles u on u.oid = m.member where u.rolname = 'chat_gateway'`)
    expect(memberships.map(m => m.rolname)).toEqual(['chat_reader'])
    const { rows: owned } = await db.query<{ n: number }>(
      `select count(*)::int as n from pg_class where relowner = (select oid from pg_roles where rolname in ('chat_gateway')) or relowner = (select oid from pg_roles where rolname = 'chat_reader')`)
    expect(owned[0]!.n).toBe(0)
  })

  it('reaches nothing after RESET ROLE, even with stacked statements over the simple protocol', async () => {
    const client = await chatPool!.connect()
    try {
      await expect(client.query('set role chat_reader; reset role; select * from public.tasks')).rejects.toThrow(/permission denied/)
      await expect(client.query('select * from public.chats')).rejects.toThrow(/permission denied/)
      await expect(client.query('select set_config(\'app.chat_team_id\', \'x\', false)')).rejects.toThrow(/permission denied/)
      await expect(client.query('set role postgres')).rejects.toThrow(/permission denied/)
    }
    finally {
      client.release(true)
    }
  })
})
