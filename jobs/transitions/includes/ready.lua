-- The ready index: the queued jobs a worker may take, per model and lane
-- (keys.ready), and the wake-ups that bring idle workers to them
-- (keys.wakeups).  Every key is derived from a model's name.
--
-- make_ready: a job just queued enters its model's index of its lane, scored
--   by when it may run (µs); the jobs of one script a µs apart, in the order
--   they were queued, so that the index keeps release order.
-- take_ready: the first due job of a model, the interactive lane's before the
--   batch lane's, out of the index (its id and group prefix, or nil); an entry
--   whose job is no longer queued (its own message claimed it, or it was
--   cancelled) is dropped on the way.
-- wake_ups: at the end of a script, for each model whose index it changed,
--   one wake-up per due job that no wake-up on its way counts for yet, as a
--   reply's {'', model, lane} triples (spec.py: a Dispatch with no job id is
--   a wake-up).  A wake-up counts from its publishing until a worker starts
--   from it (claim_next) or `ttl_ms` has passed (a lost message stops
--   counting then).  A finishing worker's own next job is taken out of the
--   index before this counts, so a worker that keeps going needs no message.
-- @needs common

local READY_LANES = {PRIORITY.interactive, PRIORITY.batch}
-- Entries of jobs no longer queued that one take drops at most.
local READY_SKIPS = 1000

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

local function take_ready(model, now)
  touched_models[model] = true
  local skips = 0
  for _, lane in ipairs(READY_LANES) do
    local key = ready_key_of(model, lane)
    while skips < READY_SKIPS do
      local head = redis.call('ZPOPMIN', key)
      if not head[1] then break end
      if tonumber(head[2]) > due_by(now) then
        -- A retry still in its backoff: it stays, and so does everything scored after it.
        redis.call('ZADD', key, head[2], head[1])
        break
      end
      local prefix = group_prefix_of(head[1])
      if redis.call('HGET', job_key_of(prefix, head[1]), F.status) == STATUS.queued then return head[1], prefix end
      skips = skips + 1
    end
  end
  return nil
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
        local more = due - redis.call('ZCARD', pending)
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
