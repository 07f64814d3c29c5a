-- Activity log, second version:
-- * api_key_id: the key that made a public API write (read from the transaction-local setting
--   app.api_key_id, which the audited client sets beside the actor, team and source). No foreign
--   key: an entry outlives the key it names.
-- * quiet columns: an update that changes only such columns writes no entry
--   (api_keys.last_used_at changes every minute a key is used).
-- * teams.activity_retention_days: entries older than that many days are purged by a job any app
--   instance may run; null keeps them forever.
-- * indexes for a record's history and for keyset paging (created_at desc, id desc).

alter table public.activity_log add column api_key_id uuid;
comment on column public.activity_log.api_key_id is 'The API key that made the write, for source api.';

alter table public.teams add column activity_retention_days integer
  check (activity_retention_days between 1 and 36500);
comment on column public.teams.activity_retention_days is 'Activity entries older than this many days are deleted; null keeps them forever.';

drop index if exists public.activity_log_team_id_created_at_idx;
create index activity_log_team_id_created_at_id_idx on public.activity_log (team_id, created_at desc, id desc);
create index activity_log_team_id_record_idx on public.activity_log (team_id, table_name, record_id, created_at desc);

create or replace function public.log_activity() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  excluded text[] := coalesce(tg_argv[0], '{}')::text[];
  quiet text[] := coalesce(tg_argv[1], '{}')::text[];
  new_row jsonb;
  old_row jsonb;
  changed_old jsonb;
  row_data jsonb;
  entry_team uuid;
  entry_action text := lower(tg_op);
begin
  if tg_op in ('INSERT', 'UPDATE') then
    new_row := to_jsonb(new) - excluded;
  end if;
  if tg_op in ('UPDATE', 'DELETE') then
    old_row := to_jsonb(old) - excluded;
  end if;

  if tg_op = 'UPDATE' then
    select coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb) into changed_old
    from jsonb_each(old_row) o
    where new_row -> o.key is distinct from o.value;
    -- an update that changes nothing, or only quiet columns, is not logged
    if changed_old - quiet = '{}'::jsonb then
      return null;
    end if;
  elsif tg_op = 'DELETE' then
    changed_old := old_row;
  end if;

  row_data := coalesce(to_jsonb(new), to_jsonb(old));
  entry_team := coalesce(
    (row_data ->> 'team_id')::uuid,
    case when tg_table_name = 'teams' then (row_data ->> 'id')::uuid end,
    nullif(current_setting('app.team_id', true), '')::uuid
  );
  if entry_team is null then
    return null;
  end if;

  insert into public.activity_log (team_id, actor_id, source, source_ref, api_key_id, table_name, record_id, action, new_data, old_data)
  values (
    entry_team,
    nullif(current_setting('app.actor_id', true), '')::uuid,
    coalesce(nullif(current_setting('app.source', true), ''), 'system'),
    nullif(current_setting('app.source_ref', true), ''),
    nullif(current_setting('app.api_key_id', true), '')::uuid,
    tg_table_name,
    row_data ->> 'id',
    entry_action,
    new_row,
    changed_old
  );
  return null;
end $$;
revoke execute on function public.log_activity() from public;

-- A third, optional argument: the quiet columns. Calls with one or two arguments keep working.
drop function public.enable_activity_log(text, text[]);
create function public.enable_activity_log(
  table_name text,
  exclude_cols text[] default array[]::text[],
  quiet_cols text[] default array[]::text[]
) returns void
language plpgsql as $$
begin
  execute format('drop trigger if exists activity_log on public.%I', table_name);
  execute format(
    'create trigger activity_log after insert or update or delete on public.%I for each row execute function public.log_activity(%L, %L)',
    table_name, exclude_cols::text, quiet_cols::text
  );
end $$;
revoke execute on function public.enable_activity_log(text, text[], text[]) from public;

select public.enable_activity_log('api_keys', exclude_cols => array['key_hash'], quiet_cols => array['last_used_at']);
