-- Token usage of the chat: each assistant message keeps what its answer cost (input and output
-- tokens, summed over the model calls of the answer), and chat_token_usage keeps one row per
-- answered turn for the team's monthly cap. The ledger outlives the chat and the message
-- (deleting a chat or regenerating an answer does not give tokens back).

alter table public.chat_messages
  add column input_tokens integer check (input_tokens >= 0),
  add column output_tokens integer check (output_tokens >= 0);

create table public.chat_token_usage (
  id bigint generated always as identity primary key,
  team_id uuid not null references public.teams (id) on delete cascade,
  user_id uuid references public.profiles (id) on delete set null,
  chat_id uuid references public.chats (id) on delete set null,
  input_tokens integer not null check (input_tokens >= 0),
  output_tokens integer not null check (output_tokens >= 0),
  created_at timestamptz not null default now()
);
create index chat_token_usage_team_id_created_at_idx on public.chat_token_usage (team_id, created_at);
comment on table public.chat_token_usage is 'Tokens of each answered chat turn, for the monthly team cap.';

alter table public.chat_token_usage enable row level security;
