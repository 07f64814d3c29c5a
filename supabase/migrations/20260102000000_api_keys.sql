-- API keys: a team's bearer keys for the public API under /api/v1.
-- The raw key is never stored: only its first 8 characters (key_prefix, for display) and the
-- lowercase hex SHA-256 of the whole key (key_hash, for look-up). key_hash never reaches the
-- activity log. Members may read their team's keys; only the server writes (no write policies).

create table public.api_keys (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references public.teams (id) on delete cascade,
  created_by uuid not null references public.profiles (id),
  name text not null check (char_length(name) between 1 and 100),
  key_prefix text not null check (char_length(key_prefix) = 8),
  key_hash text not null check (key_hash ~ '^[0-9a-f]{64}$'),
  last_used_at timestamptz,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create unique index api_keys_key_hash_key on public.api_keys (key_hash);
create index api_keys_team_id_created_at_idx on public.api_keys (team_id, created_at desc);
comment on table public.api_keys is 'Bearer keys for the public API; the raw key is shown once and never stored.';
comment on column public.api_keys.key_prefix is 'The first 8 characters of the raw key, shown as sk_...{prefix}.';
comment on column public.api_keys.key_hash is 'Lowercase hex SHA-256 of the raw key; never returned by any route.';

alter table public.api_keys enable row level security;
create policy "members read their team's api keys" on public.api_keys
  for select to authenticated using (public.is_team_member(team_id));
grant select on public.api_keys to authenticated;

select public.enable_activity_log('api_keys', exclude_cols => array['key_hash']);
