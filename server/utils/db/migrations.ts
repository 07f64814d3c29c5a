import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Database, Queryable } from './db-drivers'

export interface Migration {
  /** File name, e.g. `20260101000000_core.sql`; the part before the first `_` is the version. */
  name: string
  sql: string
}

// On a Postgres that is not Supabase, create what the migrations expect of Supabase:
// its roles, the auth schema, auth.users and auth.uid(). Each step only adds what is missing.
const bootstrapSql = /* sql */ `
do $$
declare
  role_name text;
begin
  foreach role_name in array array['anon', 'authenticated', 'service_role'] loop
    if not exists (select 1 from pg_roles where rolname = role_name) then
      begin
        execute format('create role %I nologin noinherit', role_name);
      exception when duplicate_object or unique_violation then null;
      end;
    end if;
  end loop;
end $$;

create schema if not exists auth;
grant usage on schema auth to anon, authenticated, service_role;

create table if not exists auth.users (
  id uuid primary key default gen_random_uuid(),
  email text,
  encrypted_password text,
  created_at timestamptz not null default now()
);

do $$
begin
  if not exists (
    select 1 from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'auth' and p.proname = 'uid'
  ) then
    create function auth.uid() returns uuid language sql stable as $fn$
      select coalesce(
        nullif(current_setting('request.jwt.claim.sub', true), ''),
        (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
      )::uuid
    $fn$;
  end if;
end $$;
`

const migrationsTableSql = /* sql */ `
create table if not exists public.schema_migrations (
  version text primary key,
  name text not null,
  checksum text not null,
  applied_at timestamptz not null default now()
);
alter table public.schema_migrations enable row level security;
`

export function checksum(sql: string): string {
  return createHash('sha256').update(sql).digest('hex')
}

export class ChangedMigrationError extends Error {
  constructor(name: string) {
    super(`Migration ${name} was changed after it was applied; restore it and add a new migration instead.`)
  }
}

async function appliedMigrations(tx: Queryable) {
  const { rows } = await tx.query<{ version: string, name: string, checksum: string }>(
    'select version, name, checksum from public.schema_migrations',
  )
  return new Map(rows.map(row => [row.version, row]))
}

/**
 * Applies the pending migrations in file-name order, in one transaction under an advisory lock,
 * and returns the names it applied. Refuses to run when an applied file has changed.
 */
export async function runMigrations(db: Database, migrations: Migration[]): Promise<string[]> {
  const ordered = [...migrations].sort((a, b) => a.name.localeCompare(b.name))
  return db.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(hashtext('schema_migrations'))`)
    await tx.exec(bootstrapSql)
    await tx.exec(migrationsTableSql)
    const applied = await appliedMigrations(tx)
    const done: string[] = []
    for (const migration of ordered) {
      const version = migration.name.split('_')[0]!
      const sum = checksum(migration.sql)
      const previous = applied.get(version)
      if (previous) {
        if (previous.checksum !== sum) throw new ChangedMigrationError(migration.name)
        continue
      }
      await tx.exec(migration.sql)
      await tx.query(
        'insert into public.schema_migrations (version, name, checksum) values ($1, $2, $3)',
        [version, migration.name, sum],
      )
      done.push(migration.name)
    }
    return done
  })
}

/** The `.sql` files of a folder as migrations, in file-name order. */
export function readMigrationFolder(folder: string): Migration[] {
  return readdirSync(folder)
    .filter(name => name.endsWith('.sql'))
    .sort()
    .map(name => ({ name, sql: readFileSync(join(folder, name), 'utf8') }))
}
