-- One instance at a time sends to a receiver: a claim holds the receivers it takes deliveries for.
--
-- Every app instance runs a webhook worker, and each sent up to 10 deliveries at a time to one
-- receiver, so that a receiver heard from 10 times as many instances at once, and a burst to it was
-- split between instances that each did a part of the work at a higher cost per delivery (on a
-- machine with fewer cores than busy processes, two instances used 1.5 times the CPU per delivery of
-- one). A claim now takes a receiver's deliveries only if no other worker holds it, and holds the
-- receivers it took deliveries for for `hold_seconds` (renewed by each claim that takes more of
-- theirs). Other instances pass over a held receiver's rows; they still take every other
-- receiver's, so that many receivers are shared out among instances. A worker that stops lets its
-- holds go; one that dies holds its receivers until the hold runs out.
--
-- Two claims that start at the same moment for a receiver nobody holds may each take a round of its
-- deliveries; the second to commit then does not get the hold, and its next claim passes the
-- receiver over.
create table public.webhook_receiver_holds (
  -- the receiver: an endpoint's id, or a team's id for its invitation webhook URL
  target uuid primary key,
  -- the worker (one per app instance and start) that holds it
  worker uuid not null,
  held_until timestamptz not null
);
comment on table public.webhook_receiver_holds is 'Which webhook worker sends to a receiver (an endpoint, or a team''s webhook URL) until when; others pass over its deliveries meanwhile.';
alter table public.webhook_receiver_holds enable row level security;

drop function public.claim_webhook_deliveries(int, float8, int, jsonb, int);

-- As before (the index walk, the room per receiver), and: passes over the rows of receivers that
-- another worker holds, and holds the receivers it took rows for.
create function public.claim_webhook_deliveries(
  take int, lease_seconds float8, new_room int, room_of jsonb, scan int, claimant uuid, hold_seconds float8
) returns table (
  id uuid, team_id uuid, body text, attempts int, retry_step int, endpoint_id uuid, target uuid,
  queued_at float8, url text, secret text, previous_secret text
)
language plpgsql volatile security definer
set search_path = public
set enable_bitmapscan = off
set enable_seqscan = off
-- with sequential scans off, the look-up of the holds (a small table) is costed past the JIT's
-- threshold, and compiling it took 47 ms of every claim
set jit = off
as $$
#variable_conflict use_column
declare
  held_elsewhere uuid[];
begin
  select coalesce(array_agg(h.target), '{}') into held_elsewhere
  from public.webhook_receiver_holds h
  where h.worker <> claimant and h.held_until > now();

  return query
  with due_now as (
    -- in the order of the pending rows' index (it stops after `scan`)
    select d.id, d.next_attempt_at, coalesce(d.endpoint_id, d.team_id) as target
    from public.webhook_deliveries d
    where d.status = 'pending' and d.next_attempt_at <= now()
      and not coalesce(d.endpoint_id, d.team_id) = any (held_elsewhere)
      and (d.endpoint_id is null or exists (select 1 from public.webhook_endpoints e where e.id = d.endpoint_id and e.enabled))
    order by d.next_attempt_at
    limit scan
    for update of d skip locked
  ),
  lease_ran_out as (
    -- by the delivering rows' index
    select d.id, d.next_attempt_at, coalesce(d.endpoint_id, d.team_id) as target
    from public.webhook_deliveries d
    where d.status = 'delivering' and d.locked_until <= now()
      and not coalesce(d.endpoint_id, d.team_id) = any (held_elsewhere)
      and (d.endpoint_id is null or exists (select 1 from public.webhook_endpoints e where e.id = d.endpoint_id and e.enabled))
    limit scan
    for update of d skip locked
  ),
  ranked as (
    select c.id, c.next_attempt_at, row_number() over (partition by c.target order by c.next_attempt_at) as slot,
           coalesce((room_of ->> c.target::text)::int, new_room) as room
    from (select * from due_now union all select * from lease_ran_out) as c
  ),
  due as (
    select r.id from ranked r where r.slot <= r.room
    order by r.next_attempt_at
    limit take
  ),
  claimed as (
    update public.webhook_deliveries d
    set status = 'delivering', locked_until = now() + make_interval(secs => lease_seconds), updated_at = now()
    from due
    where d.id = due.id
    returning d.id, d.team_id, d.body, d.attempts, d.retry_step, d.endpoint_id,
      coalesce(d.endpoint_id, d.team_id) as target,
      (extract(epoch from d.created_at) * 1000)::float8 as queued_at,
      case when d.endpoint_id is null then (select t.webhook_url from public.teams t where t.id = d.team_id)
           else (select e.url from public.webhook_endpoints e where e.id = d.endpoint_id) end as url,
      (select s.secret from public.webhook_secrets s where s.team_id = d.team_id) as secret,
      (select s.previous_secret from public.webhook_secrets s where s.team_id = d.team_id and s.previous_expires_at > now()) as previous_secret
  ),
  held as (
    -- a hold another worker took since this claim began stays theirs
    insert into public.webhook_receiver_holds as h (target, worker, held_until)
    select distinct c.target, claimant, now() + make_interval(secs => hold_seconds) from claimed c
    on conflict (target) do update set worker = excluded.worker, held_until = excluded.held_until
    where h.worker = excluded.worker or h.held_until <= now()
  )
  select c.id, c.team_id, c.body, c.attempts, c.retry_step, c.endpoint_id, c.target, c.queued_at, c.url, c.secret, c.previous_secret
  from claimed c;
end
$$;
revoke execute on function public.claim_webhook_deliveries(int, float8, int, jsonb, int, uuid, float8) from public;
