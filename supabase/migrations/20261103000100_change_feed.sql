-- The change feed: one ordered row per record event (<table>.created/.updated/.deleted) of every
-- domain table, written by a trigger in the write's own transaction, so that an event exists if
-- and only if its write committed. It feeds GET /api/v1/events, the event stream, the realtime
-- socket and the live pages.
--
-- Order and the cursor: each event carries the id of the transaction that wrote it (xid8). Events
-- are read in (xid, id) order, and only those whose transaction is below the xmin of the reader's
-- snapshot (pg_snapshot_xmin(pg_current_snapshot())): every transaction below it has ended, and
-- every transaction still to write gets a larger id. So the events a reader may list form a prefix
-- of the final order that never grows in the middle, and a cursor (the last event read) never
-- passes over an event that commits later.

create table public.record_events (
  id bigint generated always as identity primary key,
  -- no foreign keys: an event outlives the team, actor or row it speaks of
  team_id uuid not null,
  xid xid8 not null default pg_current_xact_id(),
  type text not null,
  table_name text not null,
  record_id text,
  actor_id uuid,
  source text not null,
  -- the record (to_jsonb of the row); an update adds `previous`, the old values of the columns it changed
  data jsonb not null,
  created_at timestamptz not null default clock_timestamp()
);
create index record_events_team_position_idx on public.record_events (team_id, xid, id);
create index record_events_position_idx on public.record_events (xid, id);
create index record_events_team_created_at_idx on public.record_events (team_id, created_at);
comment on table public.record_events is 'Record events of the domain tables in commit-safe order (xid, id): the change feed, its stream and the realtime socket read it.';

-- the server reads it; nobody else
alter table public.record_events enable row level security;

create function public.record_change_event() returns trigger
language plpgsql security definer set search_path = public as $$
declare
  row_data jsonb;
  previous jsonb;
  event_team uuid;
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
  if tg_op = 'UPDATE' then
    select coalesce(jsonb_object_agg(o.key, o.value), '{}'::jsonb) into previous
    from jsonb_each(to_jsonb(old)) o
    where row_data -> o.key is distinct from o.value;
    if previous = '{}'::jsonb then
      return null;
    end if;
    row_data := row_data || jsonb_build_object('previous', previous);
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

-- Wakes every instance's change hub at commit: one notification per transaction (Postgres folds
-- identical ones), whatever the number of events.
create function public.notify_record_events() returns trigger
language plpgsql security definer set search_path = public as $$
begin
  perform pg_notify('record_events', '');
  return null;
end $$;
revoke execute on function public.notify_record_events() from public;

create trigger record_events_notify after insert on public.record_events
  for each statement execute function public.notify_record_events();

-- enable_record_webhooks (called by register_domain_table for every domain table) now attaches
-- the change-feed trigger too.
create or replace function public.enable_record_webhooks(table_name text) returns void
language plpgsql as $$
begin
  execute format('drop trigger if exists record_webhooks on public.%I', table_name);
  execute format(
    'create trigger record_webhooks after insert or update or delete on public.%I for each row execute function public.queue_record_webhooks()',
    table_name
  );
  execute format('drop trigger if exists record_events on public.%I', table_name);
  execute format(
    'create trigger record_events after insert or update or delete on public.%I for each row execute function public.record_change_event()',
    table_name
  );
end $$;
revoke execute on function public.enable_record_webhooks(text) from public;

select public.enable_record_webhooks(c.relname)
from pg_trigger t
join pg_class c on c.oid = t.tgrelid
join pg_namespace n on n.oid = c.relnamespace
where n.nspname = 'public' and t.tgname = 'record_webhooks';
