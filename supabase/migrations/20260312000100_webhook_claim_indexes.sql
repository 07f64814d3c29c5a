-- The worker's claim reads the due deliveries in next_attempt_at order and, separately, the claimed
-- ones whose lease ran out. One index over both states made the second read walk every pending row
-- (a burst of 5,000 queued events: each claim scanned all 5,000 to find no expired lease). Each state
-- gets its own partial index instead: the pending rows by when they are due, the delivering rows by
-- when their lease runs out. The metrics' queue depth reads both (status = 'pending' or 'delivering').
create index webhook_deliveries_pending_due_idx on public.webhook_deliveries (next_attempt_at)
  where status = 'pending';
create index webhook_deliveries_lease_idx on public.webhook_deliveries (locked_until)
  where status = 'delivering';
drop index public.webhook_deliveries_due_idx;
