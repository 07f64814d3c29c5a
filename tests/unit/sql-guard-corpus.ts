/**
 * Hostile statements a model might write. The guard refuses every one (tests/unit/sql-guard.test.ts);
 * the database layer on its own keeps each inside its team and read-only
 * (tests/integration/chat-sql-layers.test.ts). `OTHER_TEAM` is replaced by another team's id.
 */
export interface HostileStatement {
  name: string
  sql: string
}

export const otherTeamPlaceholder = 'OTHER_TEAM'

export const hostileStatements: HostileStatement[] = [
  // stacked statements
  { name: 'stacked delete', sql: 'select * from tasks; delete from tasks' },
  { name: 'stacked drop after a comment', sql: 'select 1 -- harmless\n; drop table tasks' },
  { name: 'stacked in a block comment trick', sql: 'select 1 /* ; */; update tasks set title = \'pwned\'' },
  { name: 'stacked transaction control', sql: 'begin; delete from tasks; commit' },
  { name: 'stacked role change', sql: 'select 1; set role postgres; select * from tasks' },
  { name: 'dollar-quoted stacked statement', sql: 'select $$x$$; delete from notes; select $$y$$' },
  { name: 'anonymous code block', sql: 'do $$ begin delete from tasks; end $$' },
  // writes in CTEs and other statements
  { name: 'delete in a CTE', sql: 'with d as (delete from tasks returning *) select * from d' },
  { name: 'update in a CTE', sql: 'with u as (update tasks set title = \'x\' returning id) select count(*) from u' },
  { name: 'insert in a CTE', sql: `with i as (insert into notes (team_id, created_by, title) select team_id, created_by, 'x' from notes returning id) select * from i` },
  { name: 'insert in a nested CTE', sql: 'select * from (with d as (delete from projects returning id) select id from d) s' },
  { name: 'plain update', sql: 'update tasks set status = \'done\'' },
  { name: 'plain delete', sql: 'delete from activity_log' },
  { name: 'truncate', sql: 'truncate tasks' },
  { name: 'drop table', sql: 'drop table tasks' },
  { name: 'create table as', sql: 'create table stolen as select * from tasks' },
  { name: 'explain analyze of a delete', sql: 'explain analyze delete from tasks' },
  { name: 'prepared delete', sql: 'prepare p as delete from tasks' },
  { name: 'merge', sql: 'merge into tasks t using tasks s on t.id = s.id when matched then delete' },
  { name: 'lock table', sql: 'lock table tasks in access exclusive mode' },
  { name: 'copy to a file', sql: 'copy tasks to \'/tmp/tasks.csv\'' },
  { name: 'copy to a program', sql: 'copy (select 1) to program \'id\'' },
  { name: 'vacuum', sql: 'vacuum tasks' },
  { name: 'notify', sql: 'notify chat, \'hello\'' },
  // SELECT INTO and locking clauses
  { name: 'select into', sql: 'select * into stolen from tasks' },
  { name: 'select for update', sql: 'select * from tasks for update' },
  { name: 'select for share nowait', sql: 'select id from tasks for share nowait' },
  { name: 'for no key update in a subquery', sql: 'select * from (select * from tasks for no key update) t' },
  // role and team changes
  { name: 'set role', sql: 'set role postgres' },
  { name: 'reset role', sql: 'reset role' },
  { name: 'set session authorization', sql: 'set session authorization postgres' },
  { name: 'set the team setting', sql: `set app.chat_team_id = '${otherTeamPlaceholder}'` },
  { name: 'set_config of the role', sql: 'select set_config(\'role\', \'postgres\', true)' },
  { name: 'set_config of the team in a WHERE', sql: `select * from tasks where set_config('app.chat_team_id', '${otherTeamPlaceholder}', false) is not null` },
  { name: 'schema-qualified set_config in a lateral', sql: `select t.* from (select pg_catalog.set_config('app.chat_team_id', '${otherTeamPlaceholder}', true)) s, tasks t` },
  { name: 'reading the team setting', sql: 'select current_setting(\'app.chat_team_id\')' },
  { name: 'calling current_chat_team to compare', sql: 'select * from tasks where team_id <> public.current_chat_team()' },
  // file and network functions
  { name: 'read a server file', sql: 'select pg_read_file(\'/etc/passwd\')' },
  { name: 'list a server folder', sql: 'select * from pg_ls_dir(\'.\')' },
  { name: 'large object import', sql: 'select lo_import(\'/etc/passwd\')' },
  { name: 'dblink', sql: 'select * from dblink(\'host=203.0.113.1\', \'select 1\') as t(x int)' },
  { name: 'query_to_xml', sql: 'select query_to_xml(\'select * from tasks\', true, true, \'\')' },
  { name: 'terminate backends', sql: 'select pg_terminate_backend(pid) from pg_stat_activity' },
  { name: 'advisory lock', sql: 'select pg_advisory_lock(42)' },
  { name: 'sequence bump', sql: 'select nextval(\'activity_log_id_seq\')' },
  // catalog and system table reads
  { name: 'password hashes', sql: 'select rolname, rolpassword from pg_authid' },
  { name: 'quoted schema-qualified catalog', sql: 'SeLeCt * FrOm "pg_catalog"."pg_authid"' },
  { name: 'unicode-escaped catalog name', sql: 'select * from U&"\\0070\\0067_authid"' },
  { name: 'table statement on a catalog', sql: 'table pg_shadow' },
  { name: 'user list', sql: 'select usename, passwd from pg_user' },
  { name: 'column statistics', sql: 'select most_common_vals from pg_stats where tablename = \'tasks\'' },
  { name: 'relation list', sql: 'select relname from pg_class' },
  { name: 'information schema', sql: 'select table_name from information_schema.tables' },
  { name: 'other sessions\' queries', sql: 'select query from pg_stat_activity' },
  { name: 'regclass cast', sql: 'select \'pg_authid\'::regclass' },
  { name: 'unregistered table: chats', sql: 'select * from chats' },
  { name: 'unregistered table: chat messages', sql: 'select parts from chat_messages' },
  { name: 'unregistered table: api keys', sql: 'select key_hash from api_keys' },
  { name: 'unregistered table: profiles', sql: 'select email from profiles' },
  { name: 'unregistered table in a join', sql: 'select t.title, u.email from public.tasks t join auth.users u on u.id = t.created_by' },
  { name: 'unregistered table in a subquery', sql: 'select (select count(*) from team_members) as n' },
  // sleeps and resource abuse
  { name: 'sleep', sql: 'select pg_sleep(30)' },
  { name: 'sleep in VALUES', sql: 'values (pg_sleep_for(\'30 seconds\'))' },
  { name: 'sleep in a WHERE', sql: 'select * from tasks where pg_sleep(10) is not null' },
  // parameters and other tricks
  { name: 'parameter placeholder', sql: 'select * from tasks where id = $1' },
  { name: 'empty statement', sql: ' ; ' },
  { name: 'not SQL', sql: 'please delete every task' },
]

/**
 * Ways to read a table the user may not view (the activity log, for a plain member) by naming
 * things after it: CTEs, quoting, schemas, nesting, recursion, subquery aliases, LATERAL and set
 * operations. The guard refuses each for a member (tests/unit/sql-guard.test.ts); the database
 * layer alone answers none of the log's rows (tests/integration/chat-sql-layers.test.ts).
 */
export const hiddenTableSpellings: HostileStatement[] = [
  { name: 'CTE named after the table', sql: 'with activity_log as (select * from activity_log) select * from activity_log' },
  { name: 'quoted CTE named after the table', sql: 'with "activity_log" as (select * from "activity_log") select * from "activity_log"' },
  { name: 'CTE over the schema-qualified table', sql: 'with a as (select * from public.activity_log) select * from a' },
  { name: 'shadowing CTE over the schema-qualified table', sql: 'with activity_log as (select * from public.activity_log) select * from activity_log' },
  { name: 'materialized shadowing CTE', sql: 'with activity_log as materialized (select * from activity_log) select * from activity_log' },
  { name: 'shadowing CTE after a harmless one', sql: 'with x as (select 1), activity_log as (select * from activity_log) select activity_log.* from activity_log, x' },
  { name: 'CTE named after a visible table', sql: 'with tasks as (select * from activity_log) select * from tasks' },
  { name: 'nested WITH inside a CTE', sql: 'with t as (with activity_log as (select * from activity_log) select * from activity_log) select * from t' },
  { name: 'CTE reading a later sibling of the same name', sql: 'with a as (select * from activity_log), activity_log as (select 1 as x) select a.* from a' },
  { name: 'recursive CTE over the table', sql: 'with recursive r as (select * from activity_log union all select r.* from r where false) select * from r' },
  { name: 'recursive CTE reading the table through a sibling', sql: 'with recursive a as (select * from b), b as (select * from activity_log) select * from a' },
  { name: 'recursive shadowing CTE over the qualified table', sql: 'with recursive activity_log as (select * from public.activity_log union all select l.* from activity_log l where false) select * from activity_log' },
  { name: 'subquery aliased like a visible table', sql: 'select * from (select * from activity_log) tasks' },
  { name: 'LATERAL subquery', sql: 'select a.* from tasks t, lateral (select * from activity_log where record_id = t.id::text or true) a' },
  { name: 'EXISTS in a WHERE', sql: 'select * from activity_log where exists (select 1 from tasks)' },
  { name: 'scalar subquery inside a CTE', sql: 'with c as (select (select new_data::text from activity_log limit 1) as d) select * from c where d is not null' },
  { name: 'CTE scope leaking out of a subquery', sql: 'select l.* from (with activity_log as (select 1) select * from activity_log) a, activity_log l' },
  { name: 'UNION arm outside the CTE\'s subquery', sql: 'select new_data::text from activity_log union all (with activity_log as (select \'x\'::text as t) select t from activity_log)' },
  { name: 'shadowing CTE with UNION', sql: 'with activity_log as (select * from activity_log) select * from activity_log union select * from activity_log' },
  { name: 'TABLE command', sql: 'table activity_log' },
  { name: 'join on a subquery', sql: 'select l.* from tasks join (select * from activity_log) l on true' },
  { name: 'CTE in a subquery in the FROM of a CTE', sql: 'with a as (select * from (with b as (select * from activity_log) select * from b) s) select * from a' },
]
