-- The ready index: the queued jobs a worker may take, per model and lane
-- (keys.ready), and the wake-ups that bring idle workers to them
-- (keys.wakeups).  Every key is derived from a model's name.
--
-- Turns: within a lane, tenants take turns, by weight (start-time fair
-- queueing).  Each model's lane in a bucket has a virtual clock, the turn of
-- the job last taken from it, and each tenant a finish there, where its next
-- job's turn starts at the earliest (keys.turns, one hash per bucket): what a
-- tenant runs on one model does not push its work on another back.
-- A job made ready is scored by its turn, max(clock, the tenant's finish),
-- and moves the tenant's finish on by TURN / its weight.  So a tenant with
-- nothing queued starts at the clock, right behind what is being taken,
-- while a tenant that queued many jobs has them spread over as many turns
-- of its own: another tenant's job goes between them, whoever queued first.
-- A tenant's own jobs keep the order they came in.  The clock starts at the
-- Redis time of the lane's first job (µs), so a turn reads as a time.
--
-- make_ready: a job just queued enters its model's index of its lane at its
--   tenant's next turn.
-- make_later: a retry in its backoff waits in keys.later, scored by when it
--   ends; the first take after that moves it into its index, at its
--   tenant's next turn then.
-- leave_ready_cancelled / leave_ready_claimed: a queued job that leaves its
--   index before a worker took it from there.  Cancelled, it gives its tenant the turn back: the tenant's
--   finish moves back by its turn but for a sliver, so that a job it queues
--   next still comes after those it queued before, and no tenant is pushed
--   back by jobs it cancelled.  Claimed by its own message (a republished or
--   reclaimed job), it had its turn: the lane's clock moves to it, as a take
--   moves it.  A job that was not in the index (waiting out a backoff) moves
--   no turn.
-- take_ready: the first job of a model, the interactive lane's before the
--   batch lane's (and the interactive lanes of the other models a worker
--   serves: the one whose first job is nearest its lane's clock, then the
--   earliest turn), out of the index (its id and group
--   prefix, or nil); an entry whose job is no longer queued (its own message
--   claimed it, or it was cancelled) is dropped on the way.  The lane's clock
--   moves to the turn taken.
-- record_weight: a creation records its tenant's weight (its key's), which
--   the releases of its children read later, whoever runs them.
-- save_turns: the turns a script moved, written in one HSET; wake_ups does
--   it, so does a requeue (whose scripts answer none).
-- noted_wake_ups / wake_ups_noted: a call record's note of the wake-ups a
--   reply answered, and those wake-ups again for a replay.
-- wake_ups: at the end of a script, for each model whose index it changed,
--   one wake-up per ready job that no wake-up on its way counts for yet (at
--   most WAKE_UPS_PER_SCRIPT per model and lane), as a
--   reply's {'', model, lane} triples (spec.py: a Dispatch with no job id is
--   a wake-up).  A wake-up counts from its publishing until a worker starts
--   from it (claim_next) or `ttl_ms` has passed (a lost message stops
--   counting then).  A finishing worker's own next job is taken out of the
--   index before this counts, so a worker that keeps going needs no message.
-- @needs common

local READY_LANES = {PRIORITY.interactive, PRIORITY.batch}
-- Entries of jobs no longer queued that one take drops at most.
local READY_SKIPS = 1000
-- Wake-ups one script answers per model and lane at most.  Its caller publishes them (a POST, a worker
-- between two jobs), and a backlog whose wake-ups lapsed while they waited in the broker would
-- otherwise ask for one per job at once; the scripts after it top up.
local WAKE_UPS_PER_SCRIPT = 100
-- One turn at weight 1, in the clock's units; a weight divides it (jobs.api_keys.MAX_WEIGHT keeps a
-- turn at least 1).
local TURN = 1000
-- The part of a turn a cancelled job does not give back: its tenant's next job keeps behind those it queued
-- before (an equal turn would go by job id), however many it cancels in between (up to this many).
local SLIVERS_PER_TURN = 1024
-- Retries whose backoff is over that one take moves into their indexes at most; the next takes the rest.
local LATER_PER_TAKE = 100

local touched_models = {}
-- The turn fields this script read or moved (false: not in the hash), and those it moved, to write.
local turns = {}
local turns_moved = {}

local function turn_score(n)
  return string.format('%.17g', n)
end

-- Reads, in one HMGET, those of `fields` this script has not read or moved yet.
local function read_turns(fields)
  local missing = {}
  for _, f in ipairs(fields) do
    if turns[f] == nil then missing[#missing + 1] = f end
  end
  if #missing == 0 then return end
  local got = redis.call('HMGET', turns_key_of(), unpack(missing))
  for i, f in ipairs(missing) do turns[f] = tonumber(got[i]) or false end
end

local function move_turn(field, value)
  turns[field] = value
  turns_moved[field] = turn_score(value)
end

local function save_turns()
  local fields = {}
  for f, v in pairs(turns_moved) do
    fields[#fields + 1] = f
    fields[#fields + 1] = v
  end
  if #fields > 0 then redis.call('HSET', turns_key_of(), unpack(fields)) end
  turns_moved = {}
end

local function record_weight(tag, weight)
  move_turn(turn_weight_field(tag), weight)
end

local function make_ready(id, model, lane, now)
  local tag = tenant_tag_of(id)
  local clock_f, finish_f = turn_clock_field(model, lane), turn_finish_field(model, lane, tag)
  local weight_f = turn_weight_field(tag)
  read_turns({clock_f, finish_f, weight_f})
  if not turns[clock_f] then move_turn(clock_f, now) end
  local turn = math.max(turns[clock_f], turns[finish_f] or 0)
  move_turn(finish_f, turn + TURN / (turns[weight_f] or 1))
  redis.call('ZADD', ready_key_of(model, lane), turn_score(turn), id)
  touched_models[model] = true
end

local function make_later(id, at_us)
  redis.call('ZADD', later_key_of(), int(at_us), id)
end

-- The retries whose backoff is over, each into its index at its tenant's next turn; the entries of jobs no
-- longer queued (claimed by their own message, cancelled, expired) are dropped.
local function ready_the_later(now)
  local key = later_key_of()
  local due = redis.call('ZRANGEBYSCORE', key, '-inf', int(now), 'LIMIT', 0, LATER_PER_TAKE)
  if #due == 0 then return end
  redis.call('ZREM', key, unpack(due))
  for _, id in ipairs(due) do
    local f = redis.call('HMGET', job_key_of(group_prefix_of(id), id), F.status, F.model, F.priority)
    if f[1] == STATUS.queued then make_ready(id, f[2], lane_of(f[3]), now) end
  end
end

-- The lane's clock moves to the turn taken (never back: a retry's or a reclaim's turn may be earlier).
local function turn_taken(model, lane, turn)
  local clock_f = turn_clock_field(model, lane)
  read_turns({clock_f})
  if not turns[clock_f] or turn > turns[clock_f] then move_turn(clock_f, turn) end
end

local function leave_ready_claimed(id, model, lane)
  local key = ready_key_of(model, lane)
  local turn = tonumber(redis.call('ZSCORE', key, id))
  if not turn then return end
  redis.call('ZREM', key, id)
  turn_taken(model, lane, turn)
end

local function leave_ready_cancelled(id, model, lane)
  if redis.call('ZREM', ready_key_of(model, lane), id) == 0 then return end
  local tag = tenant_tag_of(id)
  local finish_f, weight_f = turn_finish_field(model, lane, tag), turn_weight_field(tag)
  read_turns({finish_f, weight_f})
  if not turns[finish_f] then return end
  local turn = TURN / (turns[weight_f] or 1)
  move_turn(finish_f, turns[finish_f] - turn + turn / SLIVERS_PER_TURN)
end

-- The first entry of `model`'s index of `lane` whose job is still queued (its id and group prefix), or
-- nil; the entries of jobs no longer queued met on the way are dropped, at most budget.left of them in one
-- take.
local function take_first(model, lane, budget)
  local key = ready_key_of(model, lane)
  while budget.left > 0 do
    local head = redis.call('ZPOPMIN', key)
    if not head[1] then return nil end
    local prefix = group_prefix_of(head[1])
    if redis.call('HGET', job_key_of(prefix, head[1]), F.status) == STATUS.queued then
      turn_taken(model, lane, tonumber(head[2]))
      return head[1], prefix
    end
    budget.left = budget.left - 1
  end
  return nil
end

-- Of the models' interactive indexes, the one whose first entry is nearest its lane's clock (each model's
-- turns are its own: how far a turn is from its clock is what compares), the earliest turn of those; or nil.
local function earliest_interactive(models)
  local clocks = {}
  for i, m in ipairs(models) do clocks[i] = turn_clock_field(m, PRIORITY.interactive) end
  read_turns(clocks)
  local best, best_lag, best_turn = nil, nil, nil
  for i, m in ipairs(models) do
    local head = redis.call('ZRANGE', ready_key_of(m, PRIORITY.interactive), 0, 0, 'WITHSCORES')
    local turn = tonumber(head[2])
    if turn then
      local lag = math.max(turn - (turns[clocks[i]] or turn), 0)
      if not best or lag < best_lag or (lag == best_lag and turn < best_turn) then
        best, best_lag, best_turn = m, lag, turn
      end
    end
  end
  return best
end

-- take_ready(model, now, also): the first job of `model`, or of any model in `also` (the other models the
-- worker serves) in the interactive lane: every interactive job, the earliest turn first, before
-- `model`'s batch lane.
local function take_ready(model, now, also)
  touched_models[model] = true
  local budget = {left = READY_SKIPS}
  local models = {model}
  for _, m in ipairs(also or {}) do
    if m ~= model then models[#models + 1] = m end
  end
  local watched = {later_key_of()}
  for _, m in ipairs(models) do watched[#watched + 1] = ready_key_of(m, PRIORITY.interactive) end
  -- One EXISTS tells most takes (no retry waiting, no interactive work) to go straight to the batch lane.
  if redis.call('EXISTS', unpack(watched)) > 0 then
    ready_the_later(now)
    while budget.left > 0 do
      local m = earliest_interactive(models)
      if not m then break end
      touched_models[m] = true
      local id, prefix = take_first(m, PRIORITY.interactive, budget)
      if id then return id, prefix end
    end
  end
  return take_first(model, PRIORITY.batch, budget)
end

local function wake_ups(now, ttl_ms)
  save_turns()
  local out = {}
  local models = {}
  for model in pairs(touched_models) do models[#models + 1] = model end
  table.sort(models)
  local now_ms = tonumber(ms_of(now))
  for _, model in ipairs(models) do
    for _, lane in ipairs(READY_LANES) do
      -- Nothing ready (a worker that keeps going took the last): no wake-up to count.
      local due = redis.call('ZCARD', ready_key_of(model, lane))
      if due > 0 then
        local pending = wakeups_key_of(model, lane)
        redis.call('ZREMRANGEBYSCORE', pending, '-inf', now_ms)
        local more = math.min(due - redis.call('ZCARD', pending), WAKE_UPS_PER_SCRIPT)
        for i = 1, more do
          redis.call('ZADD', pending, now_ms + ttl_ms, int(now) .. ':' .. i)
          out[#out + 1] = ''
          out[#out + 1] = model
          out[#out + 1] = lane
        end
        -- The index goes with its last wake-up: nothing is left behind once the work is done.
        if more > 0 then redis.call('PEXPIRE', pending, ttl_ms) end
      end
    end
  end
  return out
end

-- A call record's note of the wake-ups a reply answered (`model lane` pairs, comma-separated), and
-- those wake-ups again from it: a replay answers them as they were (the first answer was lost, so
-- they were counted as on their way but never sent).
local function noted_wake_ups(released)
  local woken = {}
  for i = 1, #released, 3 do woken[#woken + 1] = released[i + 1] .. ' ' .. released[i + 2] end
  return table.concat(woken, ',')
end

local function wake_ups_noted(note)
  local released = {}
  for model, lane in string.gmatch(note or '', '([^ ,]+) ([^ ,]+)') do
    released[#released + 1] = ''
    released[#released + 1] = model
    released[#released + 1] = lane
  end
  return released
end
