-- The activity log: one row per changed row of every table that called
-- enable_activity_log, written by a trigger in the same transaction as the change.
-- The actor, team and source come from transaction-local settings set by the
-- audited client (app.actor_id, app.team_id, app.source, app.source_ref).

create table public.activity_log (
  id uuid primary key default gen_random_uuid(),
  -- no foreign keys: an entry outlives the team, actor or row it speaks of
  team_id uuid not null,
  actor_id uuid,
  source text not null check (source in ('web', 'api', 'chat', 'system')),
  source_ref text,
  table_name text not null,
  record_id text,
  action text not null check (action in ('insert', 'update', 'delete')),
  new_data jsonb,
  old_data jsonb,
  created_at timestamptz not null default now()
);
create index activity_log_team_id_created_at_idx on public.activity_log (team_id, created_at desc);
comment on table public.activity_log is 'Every write to a logged table: who (actor_id), from where (source: web, api, chat, system), what (table_name, record_id, action) and the values (new_data, old_data).';
comment on column public.activity_log.source_ref is 'The chat id for writes made by the chat assistant.';

alter table public.activity_log enable row level security;
create policy "owners and admins read their team's activity" on public.activity_log
  for select to authenticated using (public.has_team_role(team_id, array['owner', 'admin']));
grant select on public.activity_log to authenticated;

create function public.log_activity() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  excluded text[] := coalesce(tg_argv[0], '{}')::text[];
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
    -- an update that changes nothing (outside the excluded columns) is not logged
    if changed_old = '{}'::jsonb then
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

  insert into public.activity_log (team_id, actor_id, source, source_ref, table_name, record_id, action, new_data, old_data)
  values (
    entry_team,
    nullif(current_setting('app.actor_id', true), '')::uuid,
    coalesce(nullif(current_setting('app.source', true), ''), 'system'),
    nullif(current_setting('app.source_ref', true), ''),
    tg_table_name,
    row_data ->> 'id',
    entry_action,
    new_row,
    changed_old
  );
  return null;
end $$;

-- Attaches the activity-log trigger to a table; calling it again replaces the trigger.
create function public.enable_activity_log(table_name text, exclude_cols text[] default array[]::text[]) returns void
language plpgsql as $$
begin
  execute format('drop trigger if exists activity_log on public.%I', table_name);
  execute format(
    'create trigger activity_log after insert or update or delete on public.%I for each row execute function public.log_activity(%L)',
    table_name, exclude_cols::text
  );
end $$;

revoke execute on function public.enable_activity_log(text, text[]) from public;
revoke execute on function public.log_activity() from public;

select public.enable_activity_log('teams');
select public.enable_activity_log('team_members');
