-- Rate limits of the public API: one fixed-window counter per key (or, for requests without a
-- valid key, per address), counted and read in the statement that looks the key up, so every
-- app instance shares them. The earlier one-row-per-request table was never used.
drop table public.rate_limits;
create table public.rate_limits (
  key text primary key,
  window_started_at timestamptz not null,
  count integer not null
);
comment on table public.rate_limits is 'Requests counted in the current fixed window, per API key (key:<id>) or address (ip:<address>).';
alter table public.rate_limits enable row level security;
