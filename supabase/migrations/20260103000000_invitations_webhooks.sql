-- Invitations and the webhooks that deliver them.
-- An invitation's token is never stored in the clear: token_hash (lowercase hex SHA-256) finds it,
-- token_encrypted (AES-256-GCM with a key derived from the app secret) lets admins copy the link of a
-- pending invitation. Neither column reaches the activity log.
-- Webhooks go through an outbox: webhook_deliveries is written in the transaction of the change that
-- fires the event, and a worker in the app delivers it and records each attempt in webhook_attempts.
-- RLS is on for every table; owners and admins of the team may read; only the server writes.

create table public.invitations (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references public.teams (id) on delete cascade,
  email text not null check (email = lower(email) and char_length(email) between 3 and 254),
  role text not null check (role in ('admin', 'member')),
  token_hash text not null check (token_hash ~ '^[0-9a-f]{64}$'),
  token_encrypted text not null,
  invited_by uuid references public.profiles (id) on delete set null,
  expires_at timestamptz not null default now() + interval '7 days',
  accepted_at timestamptz,
  accepted_by uuid references public.profiles (id) on delete set null,
  revoked_at timestamptz,
  created_at timestamptz not null default now(),
  check (accepted_at is null or revoked_at is null)
);
create unique index invitations_token_hash_key on public.invitations (token_hash);
-- at most one open invitation per team and e-mail (an expired one is closed before a new one is made)
create unique index invitations_open_email_key on public.invitations (team_id, email)
  where accepted_at is null and revoked_at is null;
create index invitations_team_id_created_at_idx on public.invitations (team_id, created_at desc);
comment on table public.invitations is 'One row per invite; pending while neither accepted nor revoked and before expires_at.';
comment on column public.invitations.token_hash is 'Lowercase hex SHA-256 of the one-time token; never returned by any route.';
comment on column public.invitations.token_encrypted is 'The token encrypted with AES-256-GCM, for the admins'' copy-link action.';

alter table public.invitations enable row level security;
create policy "owners and admins read their team's invitations" on public.invitations
  for select to authenticated using (public.has_team_role(team_id, array['owner', 'admin']));
grant select (id, team_id, email, role, invited_by, expires_at, accepted_at, accepted_by, revoked_at, created_at)
  on public.invitations to authenticated;

select public.enable_activity_log('invitations', exclude_cols => array['token_hash', 'token_encrypted']);

-- The signing secret of a team's webhooks (Standard Webhooks `whsec_` + base64), made with the team.
create table public.webhook_secrets (
  team_id uuid primary key references public.teams (id) on delete cascade,
  secret text not null check (secret ~ '^whsec_[A-Za-z0-9+/=]+$'),
  created_at timestamptz not null default now(),
  rotated_at timestamptz
);
comment on table public.webhook_secrets is 'The whsec_ secret each team''s webhook deliveries are signed with.';

alter table public.webhook_secrets enable row level security;
create policy "owners and admins read their team's webhook secret" on public.webhook_secrets
  for select to authenticated using (public.has_team_role(team_id, array['owner', 'admin']));
grant select on public.webhook_secrets to authenticated;

-- The outbox: one row per event to deliver; its id is the `webhook-id` of every attempt.
create table public.webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references public.teams (id) on delete cascade,
  event text not null,
  -- the exact JSON body `{ type, timestamp, data }`, kept as text so every attempt sends the same bytes
  body text not null,
  status text not null default 'pending' check (status in ('pending', 'delivering', 'succeeded', 'failed')),
  attempts integer not null default 0,
  -- failed attempts since it was last queued; picks the next retry delay
  retry_step integer not null default 0,
  last_status_code integer,
  last_error text,
  next_attempt_at timestamptz not null default now(),
  -- while delivering: when another worker may take it over (the instance that claimed it died)
  locked_until timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_deliveries_due_idx on public.webhook_deliveries (next_attempt_at)
  where status in ('pending', 'delivering');
create index webhook_deliveries_team_id_created_at_idx on public.webhook_deliveries (team_id, created_at desc);
comment on table public.webhook_deliveries is 'Webhook outbox: written with the change that fires the event, delivered by the app''s worker.';

create table public.webhook_attempts (
  id uuid primary key default gen_random_uuid(),
  delivery_id uuid not null references public.webhook_deliveries (id) on delete cascade,
  team_id uuid not null references public.teams (id) on delete cascade,
  attempt integer not null,
  url text not null,
  status_code integer,
  error text,
  duration_ms integer not null,
  created_at timestamptz not null default now()
);
create index webhook_attempts_delivery_id_idx on public.webhook_attempts (delivery_id, attempt);
comment on table public.webhook_attempts is 'One row per delivery attempt: the answer''s status code or the error.';

alter table public.webhook_deliveries enable row level security;
alter table public.webhook_attempts enable row level security;
create policy "owners and admins read their team's webhook deliveries" on public.webhook_deliveries
  for select to authenticated using (public.has_team_role(team_id, array['owner', 'admin']));
create policy "owners and admins read their team's webhook attempts" on public.webhook_attempts
  for select to authenticated using (public.has_team_role(team_id, array['owner', 'admin']));
grant select on public.webhook_deliveries, public.webhook_attempts to authenticated;
