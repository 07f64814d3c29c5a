-- Server-side sessions. The sealed session cookie carries the id of a row here, and a request is
-- signed in only while that row exists: signing out deletes it, so a cookie captured before
-- sign-out no longer works, and "sign out everywhere" or a password change deletes a user's
-- other rows at once, on every app instance (each request reads the row by its primary key).
create table public.user_sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  created_at timestamptz not null default now()
);
create index user_sessions_user_id_idx on public.user_sessions (user_id);
comment on table public.user_sessions is 'Live browser sessions; a session cookie is valid only while its row exists.';
alter table public.user_sessions enable row level security;
