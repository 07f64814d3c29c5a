-- One timestamp form wherever a row becomes JSON: UTC, `Z`, exactly three fractional digits
-- (2026-11-28T00:12:13.671Z), the form the API answers records in. to_jsonb prints a timestamptz
-- as `2026-11-28T00:12:13.671+00:00` (or `…13.1+00:00`), and the change feed's events and the
-- activity log's values were made with it. Webhook payloads already converted their rows; now the
-- change feed and the activity log do the same, through the same function (with_utc_timestamps: a row as JSON with its
-- timestamptz columns, by the table's column types, in that form).

-- The change feed: inserts and deletes, a statement's rows at once.
create or replace function public.record_change_event_rows() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  event_type text := tg_table_name || '.' || case tg_op when 'INSERT' then 'created' else 'deleted' end;
  timestamps text[] := public.timestamp_columns(tg_relid);
begin
  insert into public.record_events (team_id, type, table_name, record_id, actor_id, source, data)
  select (r.data ->> 'team_id')::uuid, event_type, tg_table_name, r.data ->> 'id',
    nullif(current_setting('app.actor_id', true), '')::uuid,
    coalesce(nullif(current_setting('app.source', true), ''), 'system'),
    public.with_utc_timestamps(r.data, timestamps)
  from (select to_jsonb(changed) as data from changed_rows as changed) as r
  where r.data ->> 'team_id' is not null;
  return null;
end $$;
revoke execute on function public.record_change_event_rows() from public;

-- The change feed: an update, with the columns it changed (`previous`).
create or replace function public.record_change_event() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  row_data jsonb;
  previous jsonb;
  event_team uuid;
  timestamps text[];
begin
  if tg_op = 'DELETE' then
    row_data := to_jsonb(old);
  else
    row_data := to_jsonb(new);
  end if;
  event_team := (row_data ->> 'team_id')::uuid;
  if event_team is null then
    return null;
  end if;
  timestamps := public.timestamp_columns(tg_relid);
  row_data := public.with_utc_timestamps(row_data, timestamps);
  if tg_op = 'UPDATE' then
    select coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb) into previous
    from jsonb_each(to_jsonb(old)) o
    where to_jsonb(new) -> o.key is distinct from o.value;
    if previous = '{}'::jsonb then
      return null;
    end if;
    row_data := row_data || jsonb_build_object('previous', public.with_utc_timestamps(previous, timestamps));
  end if;
  insert into public.record_events (team_id, type, table_name, record_id, actor_id, source, data)
  values (
    event_team,
    tg_table_name || '.' || case tg_op when 'INSERT' then 'created' when 'UPDATE' then 'updated' else 'deleted' end,
    tg_table_name,
    row_data ->> 'id',
    nullif(current_setting('app.actor_id', true), '')::uuid,
    coalesce(nullif(current_setting('app.source', true), ''), 'system'),
    row_data
  );
  return null;
end $$;
revoke execute on function public.record_change_event() from public;

-- The activity log: the new values and the old values an action changed. What changed is found on
-- the rows as they are (a change within a millisecond is still a change), then converted.
create or replace function public.log_activity() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  excluded text[] := coalesce(tg_argv[0], '{}')::text[];
  quiet text[] := coalesce(tg_argv[1], '{}')::text[];
  timestamps text[] := public.timestamp_columns(tg_relid);
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
    public.with_utc_timestamps(new_row, timestamps),
    public.with_utc_timestamps(changed_old, timestamps)
  );
  return null;
end $$;
revoke execute on function public.log_activity() from public;
