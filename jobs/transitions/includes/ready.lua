-- The ready index: the queued jobs a worker may take, per model and lane
-- (keys.ready), and the wake-ups that bring idle workers to them
-- (keys.wakeups).  Every key is derived from a model's name.
--
-- make_ready: a job just queued enters its model's index of its lane, scored
--   by when it may run (µs); the jobs of one script a µs apart, in the order
--   they were queued, so that the index keeps release order.
-- take_ready: the first due job of a model, the interactive lane's before the
--   batch lane's (and the interactive lanes of the other models a worker
--   serves, the earliest queued first), out of the index (its id and group
--   prefix, or nil); an entry whose job is no longer queued (its own message
--   claimed it, or it was cancelled) is dropped on the way.
-- noted_wake_ups / wake_ups_noted: a call record's note of the wake-ups a
--   reply answered, and those wake-ups again for a replay.
-- wake_ups: at the end of a script, for each model whose index it changed,
--   one wake-up per due job that no wake-up on its way counts for yet (at
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

local touched_models = {}
local ready_seq = 0

-- What is due at `now`: the jobs this script queued are scored up to ready_seq µs past it.
local function due_by(now)
  return now + ready_seq
end

local function make_ready(id, model, lane, at_us)
  ready_seq = ready_seq + 1
  redis.call('ZADD', ready_key_of(model, lane), int(at_us + ready_seq), id)
  touched_models[model] = true
end

-- The first entry of the index `key` that is due and whose job is still queued (its id and group
-- prefix), or nil; the entries of jobs no longer queued met on the way are dropped, at most
-- budget.left of them in one take.
local function take_due(key, now, budget)
  while budget.left > 0 do
    local head = redis.call('ZPOPMIN', key)
    if not head[1] then return nil end
    if tonumber(head[2]) > due_by(now) then
      -- A retry still in its backoff: it stays, and so does everything scored after it.
      redis.call('ZADD', key, head[2], head[1])
      return nil
    end
    local prefix = group_prefix_of(head[1])
    if redis.call('HGET', job_key_of(prefix, head[1]), F.status) == STATUS.queued then return head[1], prefix end
    budget.left = budget.left - 1
  end
  return nil
end

-- Of the models' interactive indexes, the one whose first entry is due and was queued first, or nil.
local function earliest_interactive(models, now)
  local best, best_score = nil, nil
  for _, m in ipairs(models) do
    local head = redis.call('ZRANGE', ready_key_of(m, PRIORITY.interactive), 0, 0, 'WITHSCORES')
    local score = tonumber(head[2])
    if score and score <= due_by(now) and (not best_score or score < best_score) then best, best_score = m, score end
  end
  return best
end

-- take_ready(model, now, also): the first due job of `model`, or of any model in `also` (the other
-- models the worker serves) in the interactive lane: every interactive job, the earliest queued
-- first, before `model`'s batch lane.
local function take_ready(model, now, also)
  touched_models[model] = true
  local budget = {left = READY_SKIPS}
  local models = {model}
  for _, m in ipairs(also or {}) do
    if m ~= model then models[#models + 1] = m end
  end
  local interactive = {}
  for i, m in ipairs(models) do interactive[i] = ready_key_of(m, PRIORITY.interactive) end
  -- One EXISTS tells most takes (no interactive work at all) to go straight to the batch lane.
  if redis.call('EXISTS', unpack(interactive)) > 0 then
    while budget.left > 0 do
      local m = earliest_interactive(models, now)
      if not m then break end
      touched_models[m] = true
      local id, prefix = take_due(ready_key_of(m, PRIORITY.interactive), now, budget)
      if id then return id, prefix end
    end
  end
  return take_due(ready_key_of(model, PRIORITY.batch), now, budget)
end

local function wake_ups(now, ttl_ms)
  local out = {}
  local models = {}
  for model in pairs(touched_models) do models[#models + 1] = model end
  table.sort(models)
  local now_ms = tonumber(ms_of(now))
  for _, model in ipairs(models) do
    for _, lane in ipairs(READY_LANES) do
      -- Nothing due (a worker that keeps going took the last): no wake-up to count.
      local due = redis.call('ZCOUNT', ready_key_of(model, lane), '-inf', int(due_by(now)))
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
