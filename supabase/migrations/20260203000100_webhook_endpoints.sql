-- Webhook endpoints: several receivers per team, each subscribed to chosen event types, and
-- record events (<table>.created/.updated/.deleted) queued by a trigger in the write's own
-- transaction, so that an event exists if and only if its write committed.

create table public.webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references public.teams (id) on delete cascade,
  url text not null check (url ~ '^https?://' and length(url) <= 2048),
  description text not null default '' check (length(description) <= 500),
  -- event types (e.g. tasks.created, invitation.accepted) or '*'
  events text[] not null check (cardinality(events) > 0),
  enabled boolean not null default true,
  -- why it was disabled (by a person or automatically), shown in Settings > Webhooks
  disabled_reason text,
  disabled_at timestamptz,
  -- the first failed attempt since the last success; null while the receiver answers 2xx
  failing_since timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_endpoints_team_id_idx on public.webhook_endpoints (team_id);
comment on table public.webhook_endpoints is 'A team''s webhook receivers and the event types each one is subscribed to.';

alter table public.webhook_endpoints enable row level security;
create policy "owners and admins read their team's webhook endpoints" on public.webhook_endpoints
  for select to authenticated using (public.has_team_role(team_id, array['owner', 'admin']));
grant select on public.webhook_endpoints to authenticated;

-- null: the team's webhook_url (the invitation receiver of Settings > General)
alter table public.webhook_deliveries add column endpoint_id uuid references public.webhook_endpoints (id) on delete cascade;
create index webhook_deliveries_endpoint_id_created_at_idx on public.webhook_deliveries (endpoint_id, created_at desc);

-- the first 4 KiB of the receiver's answer
alter table public.webhook_attempts add column response_body text;

-- after a rotation the old secret still signs deliveries (a second signature) until previous_expires_at
alter table public.webhook_secrets add column previous_secret text check (previous_secret ~ '^whsec_[A-Za-z0-9+/=]+$');
alter table public.webhook_secrets add column previous_expires_at timestamptz;

-- A sibling of the activity-log trigger: queues one outbox row per enabled endpoint of the row's
-- team subscribed to the event. data is the record; an update adds `previous`, the old values of
-- the columns it changed (an update that changes nothing fires nothing).
create function public.queue_record_webhooks() returns trigger
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

  if tg_op = 'UPDATE' then
    select coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb) into previous
    from jsonb_each(to_jsonb(old)) o
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

-- Attaches the record-webhook trigger to a domain table; calling it again replaces the trigger.
create function public.enable_record_webhooks(table_name text) returns void
language plpgsql as $$
begin
  execute format('drop trigger if exists record_webhooks on public.%I', table_name);
  execute format(
    'create trigger record_webhooks after insert or update or delete on public.%I for each row execute function public.queue_record_webhooks()',
    table_name
  );
end $$;

revoke execute on function public.enable_record_webhooks(text) from public;
revoke execute on function public.queue_record_webhooks() from public;

-- every domain table there is now (a team_id, created_by and created_at; not one of the app's own)
do $$
declare
  domain_table text;
begin
  for domain_table in
    select c.table_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.table_schema = 'public' and c.column_name in ('team_id', 'created_by', 'created_at')
      and c.table_name not in ('teams', 'profiles', 'team_members', 'invitations', 'api_keys', 'rate_limits',
        'schema_migrations', 'activity_log', 'chats', 'chat_messages')
      and c.table_name not like 'webhook\_%'
    group by c.table_name
    having count(*) = 3
  loop
    perform public.enable_record_webhooks(domain_table);
  end loop;
end $$;
