-- The API log: one entry per public API, PostgREST and MCP request whose credential is known,
-- written in batches by each app instance (server/utils/api-log/), and per-minute and per-hour
-- usage rollups kept up by the same statement. Entries live in one partition per UTC day, which
-- the writer creates as it needs them and the retention job drops.

alter table public.teams add column api_log_retention_days integer not null default 30
  check (api_log_retention_days between 1 and 90);
comment on column public.teams.api_log_retention_days is 'API log entries and usage older than this many days are deleted (1 to 90).';

create table public.api_log_entries (
  -- the Request-Id (req_ and a ULID, whose time is `at`)
  id text not null,
  at timestamptz not null,
  team_id uuid not null,
  api_key_id uuid,
  grant_id uuid,
  source text not null check (source in ('api', 'rest', 'mcp', 'realtime')),
  method text not null,
  path text not null,
  "table" text,
  query text,
  status smallint not null,
  duration_ms real not null,
  error_code text,
  mcp_method text,
  mcp_tool text,
  request_bytes integer not null,
  response_bytes integer not null,
  ip text,
  user_agent text,
  client_request_id text
) partition by range (at);
comment on table public.api_log_entries is 'Requests of the public API, PostgREST and MCP with a known credential; one partition per UTC day.';
create index api_log_entries_team_at on public.api_log_entries (team_id, at desc, id desc);
create index api_log_entries_key_at on public.api_log_entries (team_id, api_key_id, at desc, id desc);
create index api_log_entries_id on public.api_log_entries (id);
alter table public.api_log_entries enable row level security;

-- Creates the partition of one UTC day when it is missing (one creator at a time).
create function public.api_log_ensure_partition(day date) returns void
language plpgsql as $$
declare
  name text := 'api_log_entries_' || to_char(day, 'YYYYMMDD');
begin
  if to_regclass('public.' || name) is not null then return; end if;
  perform pg_advisory_xact_lock(hashtext('api_log_partitions'));
  if to_regclass('public.' || name) is not null then return; end if;
  execute format('create table public.%I partition of public.api_log_entries for values from (%L) to (%L)',
    name, day::text || ' 00:00:00+00', (day + 1)::text || ' 00:00:00+00');
  execute format('alter table public.%I enable row level security', name);
end
$$;

create table public.api_usage (
  team_id uuid not null,
  -- the key's or the grant's id
  credential_id uuid not null,
  api_key_id uuid,
  grant_id uuid,
  period text not null check (period in ('minute', 'hour')),
  start timestamptz not null,
  requests integer not null,
  ok integer not null,
  client_errors integer not null,
  rate_limited integer not null,
  server_errors integer not null,
  -- requests per latency bucket (server/utils/api-log/latency.ts names the bounds)
  latency_buckets integer[] not null,
  primary key (team_id, credential_id, period, start)
);
comment on table public.api_usage is 'Requests per key or grant and minute or hour, by outcome, with a latency histogram.';
create index api_usage_team_period_start on public.api_usage (team_id, period, start);
alter table public.api_usage enable row level security;

-- Element-wise sum of two histograms.
create function public.api_usage_add_buckets(a integer[], b integer[]) returns integer[]
language sql immutable as $$
  select array_agg(coalesce(a[i], 0) + coalesce(b[i], 0) order by i)
  from generate_series(1, greatest(coalesce(array_length(a, 1), 0), coalesce(array_length(b, 1), 0))) as i
$$;
