-- What each second factor keeps, the recovery codes, the server-side WebAuthn challenges, the
-- account's security log, and what a session records about itself.

-- An authenticator app: its secret sealed with AES-256-GCM under a key derived from the app secret
-- (totp_key_id names that key, so that the secret can rotate), and the last time step accepted
-- (a code is accepted at most once: a step at or below it is refused).
alter table public.auth_factors
  add column totp_secret text,
  add column totp_key_id text,
  add column totp_last_step bigint,
  -- a passkey: the credential id (base64url), its COSE public key, signature counter and transports
  add column credential_id text,
  add column public_key bytea,
  add column sign_count bigint not null default 0,
  add column transports text[] not null default '{}',
  add constraint auth_factors_totp_shape check (type <> 'totp' or (totp_secret is not null and totp_key_id is not null)),
  add constraint auth_factors_passkey_shape check (type <> 'passkey' or (credential_id is not null and public_key is not null));
create unique index auth_factors_credential_id_key on public.auth_factors (credential_id) where credential_id is not null;

-- Recovery codes: a SHA-256 of each (they are long random codes, so a fast hash is enough); a code works once.
create table public.recovery_codes (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  code_hash text not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create unique index recovery_codes_user_hash_key on public.recovery_codes (user_id, code_hash);
comment on table public.recovery_codes is 'Hashed single-use recovery codes of an account.';
alter table public.recovery_codes enable row level security;

-- WebAuthn challenges live on the server: bound to a session (or to the nonce of a short-lived
-- cookie before sign-in) and to a purpose, used once, valid five minutes.
create table public.webauthn_challenges (
  id uuid primary key default gen_random_uuid(),
  challenge text not null unique,
  purpose text not null check (purpose in ('register', 'sign_in', 'second_factor', 'reauth')),
  session_id uuid references public.user_sessions (id) on delete cascade,
  nonce text,
  user_id uuid references auth.users (id) on delete cascade,
  expires_at timestamptz not null default now() + interval '5 minutes',
  check (session_id is not null or nonce is not null)
);
create index webauthn_challenges_expires_at_idx on public.webauthn_challenges (expires_at);
alter table public.webauthn_challenges enable row level security;

-- Failed second-factor attempts, for the per-account throttle (5 in 5 minutes).
create table public.mfa_attempts (
  id bigint generated always as identity primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  at timestamptz not null default now()
);
create index mfa_attempts_user_at_idx on public.mfa_attempts (user_id, at);
alter table public.mfa_attempts enable row level security;

-- The account's security log: events and methods only; never a secret, code or assertion.
create table public.security_events (
  id bigint generated always as identity primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  at timestamptz not null default now(),
  event text not null check (event in ('sign_in', 'sign_in_failed', 'factor_added', 'factor_removed',
    'recovery_codes_created', 'recovery_code_used', 'reauth', 'session_ended')),
  method text check (method in ('password', 'totp', 'passkey', 'recovery_code')),
  ip text,
  user_agent text
);
create index security_events_user_id_idx on public.security_events (user_id, id desc);
comment on table public.security_events is 'Per-account security log (sign-ins, factors, recovery codes, sudo, ended sessions).';
alter table public.security_events enable row level security;

-- What a session shows its owner: the methods used to reach its level, where it came from, and
-- when it was last seen (written at most once a minute).
alter table public.user_sessions
  add column methods text[] not null default '{}',
  add column last_seen_at timestamptz not null default now(),
  add column ip text,
  add column user_agent text;
