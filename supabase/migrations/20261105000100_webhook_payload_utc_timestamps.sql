-- Webhook payloads carry timestamps in the form the API answers them (`2026-11-26T00:05:22.123Z`),
-- not as to_jsonb prints them (`2026-11-26T00:05:22.123456+00:00`, in the session's time zone).

-- The row's timestamptz columns (by the table's column types, never by what a text looks like)
-- as UTC ISO text with milliseconds and `Z`.
create function public.json_utc_timestamps(row_data jsonb, relation oid) returns jsonb
language sql stable set search_path = public as $$
  select coalesce(jsonb_object_agg(f.key, case
      when t.attname is not null and jsonb_typeof(f.value) = 'string'
        then to_jsonb(to_char((f.value #>> '{}')::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      else f.value end), '{}'::jsonb)
  from jsonb_each(row_data) f
  left join pg_attribute t on t.attrelid = relation and t.attname = f.key and t.atttypid = 'timestamptz'::regtype and not t.attisdropped
$$;

revoke execute on function public.json_utc_timestamps(jsonb, oid) from public;

create or replace function public.queue_record_webhooks() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  row_data jsonb;
  previous jsonb;
  event_team uuid;
  event_type text;
  payload text;
begin
  if tg_op = 'DELETE' then
    row_data := to_jsonb(old);
  else
    row_data := to_jsonb(new);
  end if;
  event_team := (row_data ->> 'team_id')::uuid;
  event_type := tg_table_name || '.' || case tg_op when 'INSERT' then 'created' when 'UPDATE' then 'updated' else 'deleted' end;
  if event_team is null or not exists (
    select 1 from public.webhook_endpoints e
    where e.team_id = event_team and e.enabled and (event_type = any (e.events) or '*' = any (e.events))
  ) then
    return null;
  end if;
  row_data := public.json_utc_timestamps(row_data, tg_relid);

  if tg_op = 'UPDATE' then
    select coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb) into previous
    from jsonb_each(public.json_utc_timestamps(to_jsonb(old), tg_relid)) o
    where row_data -> o.key is distinct from o.value;
    if previous = '{}'::jsonb then
      return null;
    end if;
    row_data := row_data || jsonb_build_object('previous', previous);
  end if;

  payload := jsonb_build_object(
    'type', event_type,
    'timestamp', to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'data', row_data
  )::text;
  insert into public.webhook_deliveries (team_id, endpoint_id, event, body)
  select event_team, e.id, event_type, payload
  from public.webhook_endpoints e
  where e.team_id = event_team and e.enabled and (event_type = any (e.events) or '*' = any (e.events));
  return null;
end $$;
