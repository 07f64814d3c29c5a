-- OAuth for the MCP server: the clients agents register (or name by a metadata document URL), the
-- authorization requests waiting on the consent page, the single-use codes, the grants (a user's
-- connection of one client to one team, with per-table scopes like an API key's) and their tokens.
-- Every secret (code, access token, refresh token) is stored as its SHA-256 only. The app reads
-- and writes these tables with its own elevated connection; no API role may touch them.

create table public.oauth_clients (
  client_id text primary key check (char_length(client_id) between 1 and 2048),
  client_name text not null check (char_length(client_name) between 1 and 200),
  redirect_uris text[] not null check (cardinality(redirect_uris) between 1 and 20),
  -- 'registered': dynamic registration; 'metadata_document': fetched from the https client_id itself (a cache)
  kind text not null check (kind in ('registered', 'metadata_document')),
  metadata jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  fetched_at timestamptz not null default now()
);
comment on table public.oauth_clients is 'OAuth clients of the MCP server: registered (RFC 7591) or cached Client ID Metadata Documents.';

create table public.oauth_requests (
  id uuid primary key default gen_random_uuid(),
  client_id text not null references public.oauth_clients (client_id) on delete cascade,
  redirect_uri text not null,
  code_challenge text not null,
  state text,
  scopes text[] not null default '{}',
  resource text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null default now() + interval '10 minutes'
);
comment on table public.oauth_requests is 'Authorization requests waiting for the user on the consent page (10 minutes).';

create table public.oauth_grants (
  id uuid primary key default gen_random_uuid(),
  client_id text not null references public.oauth_clients (client_id) on delete cascade,
  client_name text not null,
  team_id uuid not null references public.teams (id) on delete cascade,
  user_id uuid not null references public.profiles (id) on delete cascade,
  -- table name (or "*") to 'read' or 'write', as an API key's scopes
  scopes jsonb not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index oauth_grants_team_id_created_at_idx on public.oauth_grants (team_id, created_at desc);
create index oauth_grants_user_id_idx on public.oauth_grants (user_id, team_id);
comment on table public.oauth_grants is 'A connection: what a user let one OAuth client do in one team of the MCP server.';

create table public.oauth_codes (
  code_hash text primary key check (code_hash ~ '^[0-9a-f]{64}$'),
  client_id text not null references public.oauth_clients (client_id) on delete cascade,
  team_id uuid not null references public.teams (id) on delete cascade,
  user_id uuid not null references public.profiles (id) on delete cascade,
  scopes jsonb not null,
  redirect_uri text not null,
  code_challenge text not null,
  resource text,
  -- the grant the code's exchange made: a second exchange of the code revokes it
  grant_id uuid references public.oauth_grants (id) on delete cascade,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null default now() + interval '60 seconds'
);

create table public.oauth_tokens (
  token_hash text primary key check (token_hash ~ '^[0-9a-f]{64}$'),
  grant_id uuid not null references public.oauth_grants (id) on delete cascade,
  kind text not null check (kind in ('access', 'refresh')),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  -- a refresh token that was exchanged (rotation): presenting it again revokes the grant
  used_at timestamptz
);
create index oauth_tokens_grant_id_idx on public.oauth_tokens (grant_id);

alter table public.oauth_clients enable row level security;
alter table public.oauth_requests enable row level security;
alter table public.oauth_grants enable row level security;
alter table public.oauth_codes enable row level security;
alter table public.oauth_tokens enable row level security;
revoke all on public.oauth_clients, public.oauth_requests, public.oauth_grants, public.oauth_codes, public.oauth_tokens from public;

-- Every instance keeps the access tokens it has verified in memory, by grant. Any change of a grant
-- other than last_used_at (revoked, scopes, delete), and any change of the granting user's
-- membership of the grant's team (role changed, removed), notifies oauth_grant_changed with the
-- grant's id, and every listening instance forgets that grant's tokens.
create function public.notify_oauth_grant_changed() returns trigger
language plpgsql as $$
begin
  perform pg_notify('oauth_grant_changed', old.id::text);
  return null;
end;
$$;
revoke execute on function public.notify_oauth_grant_changed() from public;

create trigger oauth_grants_notify_update after update on public.oauth_grants
  for each row
  when ((to_jsonb(old) - 'last_used_at') is distinct from (to_jsonb(new) - 'last_used_at'))
  execute function public.notify_oauth_grant_changed();

create trigger oauth_grants_notify_delete after delete on public.oauth_grants
  for each row execute function public.notify_oauth_grant_changed();

create function public.notify_member_grants_changed() returns trigger
language plpgsql as $$
declare
  grant_row record;
begin
  for grant_row in
    select g.id from public.oauth_grants g
    where g.team_id = old.team_id and g.user_id = old.user_id and g.revoked_at is null
  loop
    perform pg_notify('oauth_grant_changed', grant_row.id::text);
  end loop;
  return null;
end;
$$;
revoke execute on function public.notify_member_grants_changed() from public;

create trigger team_members_notify_grants_update after update on public.team_members
  for each row when (old.role is distinct from new.role or old.user_id is distinct from new.user_id or old.team_id is distinct from new.team_id)
  execute function public.notify_member_grants_changed();

create trigger team_members_notify_grants_delete after delete on public.team_members
  for each row execute function public.notify_member_grants_changed();
