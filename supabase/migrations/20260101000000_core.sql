-- Teams, profiles, memberships and login rate limits.
-- Row-level security is on for every table; members may read their team's rows
-- through the Supabase `authenticated` role. No write policies exist: writes are
-- made by the server with elevated privilege, through the audited client.

create table public.profiles (
  id uuid primary key references auth.users (id) on delete cascade,
  email text not null,
  name text not null check (char_length(name) between 1 and 100),
  created_at timestamptz not null default now()
);
create unique index profiles_email_key on public.profiles (lower(email));
comment on table public.profiles is 'A user profile; its name is joined into listings.';

create table public.teams (
  id uuid primary key default gen_random_uuid(),
  name text not null check (char_length(name) between 1 and 100),
  webhook_url text check (webhook_url ~ '^https?://'),
  created_at timestamptz not null default now()
);

create table public.team_members (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references public.teams (id) on delete cascade,
  user_id uuid not null references public.profiles (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'member')),
  created_at timestamptz not null default now(),
  unique (team_id, user_id)
);
create index team_members_user_id_idx on public.team_members (user_id);

create table public.rate_limits (
  id bigint generated always as identity primary key,
  key text not null,
  created_at timestamptz not null default now()
);
create index rate_limits_key_created_at_idx on public.rate_limits (key, created_at desc);

-- Membership checks used by policies. security definer so that a policy on
-- team_members can ask about team_members without recursing into itself.
create function public.is_team_member(p_team_id uuid) returns boolean
language sql stable security definer set search_path = public as $$
  select exists (
    select 1 from public.team_members
    where team_id = p_team_id and user_id = auth.uid()
  )
$$;

create function public.has_team_role(p_team_id uuid, p_roles text[]) returns boolean
language sql stable security definer set search_path = public as $$
  select exists (
    select 1 from public.team_members
    where team_id = p_team_id and user_id = auth.uid() and role = any (p_roles)
  )
$$;

alter table public.profiles enable row level security;
alter table public.teams enable row level security;
alter table public.team_members enable row level security;
alter table public.rate_limits enable row level security;

create policy "members read their teams" on public.teams
  for select to authenticated using (public.is_team_member(id));

create policy "members read memberships of their teams" on public.team_members
  for select to authenticated using (public.is_team_member(team_id));

create policy "users read themselves and their teammates" on public.profiles
  for select to authenticated using (
    id = auth.uid()
    or exists (
      select 1 from public.team_members m
      where m.user_id = profiles.id and public.is_team_member(m.team_id)
    )
  );

grant usage on schema public to authenticated;
grant select on public.profiles, public.teams, public.team_members to authenticated;
