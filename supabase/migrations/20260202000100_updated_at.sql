-- Every domain table has updated_at, set by the database: its default on insert and a BEFORE
-- UPDATE trigger on every update, so no client can set it. It is stored in milliseconds, the
-- precision the answers carry, so an integration polling `updated_at=gt.<last value seen>` never
-- gets the row it saw last again.
create function public.touch_updated_at() returns trigger
language plpgsql as $$
begin
  new.updated_at := date_trunc('milliseconds', now());
  return new;
end $$;
revoke execute on function public.touch_updated_at() from public;

-- Gives a table its updated_at column (or brings an existing one to milliseconds) and the
-- trigger; a migration that adds a domain table calls it once. Calling it again changes nothing.
create function public.enable_updated_at(table_name text) returns void
language plpgsql as $$
begin
  execute format('alter table public.%I add column if not exists updated_at timestamptz(3) not null default date_trunc(''milliseconds'', now())', table_name);
  execute format('alter table public.%I alter column updated_at type timestamptz(3), alter column updated_at set default date_trunc(''milliseconds'', now())', table_name);
  execute format('comment on column public.%I.updated_at is %L', table_name, 'When the record last changed; set by the database.');
  execute format('drop trigger if exists touch_updated_at on public.%I', table_name);
  execute format(
    'create trigger touch_updated_at before update on public.%I for each row execute function public.touch_updated_at()',
    table_name
  );
end $$;
revoke execute on function public.enable_updated_at(text) from public;

select public.enable_updated_at(table_name) from (values ('projects'), ('tasks'), ('notes')) as domain (table_name);
create index tasks_team_id_updated_at_idx on public.tasks (team_id, updated_at, id);
create index projects_team_id_updated_at_idx on public.projects (team_id, updated_at, id);
create index notes_team_id_updated_at_idx on public.notes (team_id, updated_at, id);
