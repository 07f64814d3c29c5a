-- Second factors and the team's two-factor policy: the shapes that the sign-in steps and the
-- credential pipeline both read. Later migrations add each factor kind's own columns.

-- One row per second factor of an account: an authenticator app (TOTP) or a passkey. A factor
-- counts (for sign-in and for a team's policy) only once verified_at is set.
create table public.auth_factors (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  type text not null check (type in ('totp', 'passkey')),
  name text not null check (char_length(name) between 1 and 100),
  verified_at timestamptz,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index auth_factors_user_id_idx on public.auth_factors (user_id);
comment on table public.auth_factors is 'Second factors of an account; verified_at is null until the enrolment is confirmed.';
alter table public.auth_factors enable row level security;

-- The session's assurance level (1: password; 2: a second factor or a passkey) and its sudo window.
alter table public.user_sessions
  add column aal smallint not null default 1 check (aal in (1, 2)),
  add column sudo_until timestamptz;

-- A team's policy: who must have a second factor, and from when (enforced_from = when the policy
-- was turned on + grace_days).
alter table public.teams
  add column require_two_factor text not null default 'off' check (require_two_factor in ('off', 'admins', 'everyone')),
  add column two_factor_grace_days smallint not null default 0 check (two_factor_grace_days between 0 and 30),
  add column two_factor_enforced_from timestamptz;
