-- The open event streams of each API key, across app instances: a key may hold 10 at once. Each
-- open stream holds one numbered slot of its key; its instance renews its slots every few
-- seconds, and a slot not renewed for 15 s (its instance died) is free again.
create table public.event_stream_leases (
  key_id uuid not null,
  slot smallint not null check (slot between 0 and 99),
  -- the stream that holds the slot (an id its instance made)
  stream_id text not null,
  instance_id text not null,
  renewed_at timestamptz not null default now(),
  primary key (key_id, slot)
);
create index event_stream_leases_instance_idx on public.event_stream_leases (instance_id);
comment on table public.event_stream_leases is 'Which event streams (GET /api/v1/events/stream) each API key holds open, across app instances.';

-- the server uses it; nobody else
alter table public.event_stream_leases enable row level security;
