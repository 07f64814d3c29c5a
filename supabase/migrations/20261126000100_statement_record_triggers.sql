-- Inserts and deletes of a domain table queue their webhook deliveries and change-feed events once
-- per statement, not once per row. A row trigger's INSERT is a statement of its own, so each row
-- ran the statement triggers of webhook_deliveries and record_events (their notifications) and
-- planned its own INSERT: a write of 100 rows ran 200 INSERTs and 200 notification triggers. Now
-- it runs two INSERTs, each reading the statement's rows from its transition table. Updates stay
-- row triggers: each event carries the columns that row's update changed (`previous`), read by
-- pairing its old and new row.
--
-- Transition tables allow one event per trigger, so each table has, for webhooks and events alike,
-- a row trigger for updates (named as before, which register_domain_table looks for) and a
-- statement trigger each for inserts (`_created`) and deletes (`_deleted`).

-- A row's timestamptz columns (`columns`) as UTC ISO text with milliseconds and `Z`, the form the
-- API answers; other values as they are.
create function public.with_utc_timestamps(row_data jsonb, columns text[]) returns jsonb
language sql stable set search_path = public as $$
  select row_data || coalesce((
    select jsonb_object_agg(c, to_jsonb(to_char((row_data ->> c)::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
    from unnest(columns) as c
    where jsonb_typeof(row_data -> c) = 'string'
  ), '{}'::jsonb)
$$;
revoke execute on function public.with_utc_timestamps(jsonb, text[]) from public;

-- The timestamptz columns of a table, by its column types.
create function public.timestamp_columns(relation oid) returns text[]
language sql stable set search_path = public as $$
  select coalesce(array_agg(attname::text), '{}') from pg_attribute
  where attrelid = relation and attnum > 0 and not attisdropped and atttypid = 'timestamptz'::regtype
$$;
revoke execute on function public.timestamp_columns(oid) from public;

-- The rows of one insert or delete (transition table `changed_rows`): one delivery per row and
-- enabled endpoint subscribed to the event, in one INSERT.
create function public.queue_record_webhook_rows() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  event_type text := tg_table_name || '.' || case tg_op when 'INSERT' then 'created' else 'deleted' end;
  sent_at text := to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  timestamps text[] := public.timestamp_columns(tg_relid);
begin
  insert into public.webhook_deliveries (team_id, endpoint_id, event, body)
  select e.team_id, e.id, event_type,
    jsonb_build_object('type', event_type, 'timestamp', sent_at, 'data', public.with_utc_timestamps(r.data, timestamps))::text
  from (select to_jsonb(changed) as data from changed_rows as changed) as r
  join public.webhook_endpoints e
    on e.team_id = (r.data ->> 'team_id')::uuid and e.enabled and (event_type = any (e.events) or '*' = any (e.events));
  return null;
end $$;
revoke execute on function public.queue_record_webhook_rows() from public;

-- The same for the change feed: one event per row, in one INSERT.
create function public.record_change_event_rows() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  event_type text := tg_table_name || '.' || case tg_op when 'INSERT' then 'created' else 'deleted' end;
begin
  insert into public.record_events (team_id, type, table_name, record_id, actor_id, source, data)
  select (r.data ->> 'team_id')::uuid, event_type, tg_table_name, r.data ->> 'id',
    nullif(current_setting('app.actor_id', true), '')::uuid,
    coalesce(nullif(current_setting('app.source', true), ''), 'system'),
    r.data
  from (select to_jsonb(changed) as data from changed_rows as changed) as r
  where r.data ->> 'team_id' is not null;
  return null;
end $$;
revoke execute on function public.record_change_event_rows() from public;

-- The row trigger for updates: the row's timestamps converted by the column list, not by a
-- catalog join per value.
create or replace function public.queue_record_webhooks() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  row_data jsonb := to_jsonb(new);
  previous jsonb;
  event_team uuid := (row_data ->> 'team_id')::uuid;
  event_type text := tg_table_name || '.updated';
  timestamps text[];
  payload text;
begin
  if event_team is null or not exists (
    select 1 from public.webhook_endpoints e
    where e.team_id = event_team and e.enabled and (event_type = any (e.events) or '*' = any (e.events))
  ) then
    return null;
  end if;
  timestamps := public.timestamp_columns(tg_relid);
  row_data := public.with_utc_timestamps(row_data, timestamps);
  select coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb) into previous
  from jsonb_each(public.with_utc_timestamps(to_jsonb(old), timestamps)) o
  where row_data -> o.key is distinct from o.value;
  if previous = '{}'::jsonb then
    return null;
  end if;
  payload := jsonb_build_object(
    'type', event_type,
    'timestamp', to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'data', row_data || jsonb_build_object('previous', previous)
  )::text;
  insert into public.webhook_deliveries (team_id, endpoint_id, event, body)
  select event_team, e.id, event_type, payload
  from public.webhook_endpoints e
  where e.team_id = event_team and e.enabled and (event_type = any (e.events) or '*' = any (e.events));
  return null;
end $$;

drop function public.json_utc_timestamps(jsonb, oid);

create or replace function public.enable_record_webhooks(table_name text) returns void
language plpgsql as $$
begin
  execute format('drop trigger if exists record_webhooks on public.%I', table_name);
  execute format('drop trigger if exists record_webhooks_created on public.%I', table_name);
  execute format('drop trigger if exists record_webhooks_deleted on public.%I', table_name);
  execute format('drop trigger if exists record_events on public.%I', table_name);
  execute format('drop trigger if exists record_events_created on public.%I', table_name);
  execute format('drop trigger if exists record_events_deleted on public.%I', table_name);
  execute format(
    'create trigger record_webhooks after update on public.%I for each row execute function public.queue_record_webhooks()',
    table_name);
  execute format(
    'create trigger record_webhooks_created after insert on public.%I referencing new table as changed_rows for each statement execute function public.queue_record_webhook_rows()',
    table_name);
  execute format(
    'create trigger record_webhooks_deleted after delete on public.%I referencing old table as changed_rows for each statement execute function public.queue_record_webhook_rows()',
    table_name);
  execute format(
    'create trigger record_events after update on public.%I for each row execute function public.record_change_event()',
    table_name);
  execute format(
    'create trigger record_events_created after insert on public.%I referencing new table as changed_rows for each statement execute function public.record_change_event_rows()',
    table_name);
  execute format(
    'create trigger record_events_deleted after delete on public.%I referencing old table as changed_rows for each statement execute function public.record_change_event_rows()',
    table_name);
end $$;
revoke execute on function public.enable_record_webhooks(text) from public;

select public.enable_record_webhooks(c.relname)
from pg_trigger t
join pg_class c on c.oid = t.tgrelid
join pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'public' and t.tgname = 'record_webhooks';
