-- The API log's indexes, ascending, and no index of the request id alone.
--
-- Entries arrive in the order of their time. In an index whose `at` is descending, each new entry
-- is the smallest key and goes to the leftmost leaf, which Postgres splits half and half, so every
-- page stays about half full: the two indexes took 134 and 167 bytes per entry (bench:api), and
-- their inserts cost more than the same indexes ascending. Ascending, each new entry goes to the
-- rightmost leaf, which Postgres splits leaving the old page full. A page of the log, newest first,
-- reads the ascending index backwards, as fast.
--
-- A request id is found by its team and time (the id holds the millisecond it was made, which is
-- `at`) in the team's index, so the index of the id alone (49 bytes per entry, written for every
-- entry) goes.
drop index public.api_log_entries_team_at;
drop index public.api_log_entries_key_at;
drop index public.api_log_entries_id;
create index api_log_entries_team_at on public.api_log_entries (team_id, at, id);
create index api_log_entries_key_at on public.api_log_entries (team_id, api_key_id, at, id);
