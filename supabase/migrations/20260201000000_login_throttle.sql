-- Login throttling: one counter row per e-mail, counted and decided in one upsert, so that
-- concurrent attempts queue on the row lock and never all see "below the limit".
-- The window starts at the first attempt and lasts 15 minutes; a successful sign-in ends it.
create table public.login_attempts (
  key text primary key,
  attempts integer not null default 1,
  window_started_at timestamptz not null default now()
);
comment on table public.login_attempts is 'Sign-in attempts per e-mail within the current 15-minute window (throttling).';
alter table public.login_attempts enable row level security;
