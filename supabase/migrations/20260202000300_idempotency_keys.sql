-- Idempotency keys of the public API: the first request with a key (per API key) claims its row
-- before doing anything, and its answer is stored there; a retry within 24 hours with the same
-- request gets that answer again. A claim whose answer never came (the process died) is taken
-- over after a minute.
create table public.idempotency_keys (
  api_key_id uuid not null references public.api_keys (id) on delete cascade,
  key text not null check (char_length(key) between 1 and 255),
  request_hash text not null,
  status integer,
  body text,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null default now() + interval '24 hours',
  primary key (api_key_id, key)
);
create index idempotency_keys_expires_at_idx on public.idempotency_keys (expires_at);
comment on table public.idempotency_keys is 'Answers of public API writes sent with an Idempotency-Key, replayed to retries for 24 hours.';
alter table public.idempotency_keys enable row level security;
