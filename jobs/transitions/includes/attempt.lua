-- check_attempt: the precondition of every report an attempt makes on its
-- job (heartbeat, progress, retry, complete): the job exists, is
-- processing, and is still at this attempt.  Returns nil when it holds, or
-- the reply code that refuses the call.
-- cancel_or: REPLY.CANCEL_REQUESTED once a client asked to cancel the job, else `otherwise`.
-- end_attempt: appends the attempt's run to the job's intervals (F.intervals
-- says how): every attempt that held a slot, however it ended.
-- attempt_refused and intervals_after do the same from fields already read.
-- @needs common

local function attempt_refused(status, attempts, attempt)
  if not status then return REPLY.NO_JOB end
  if status ~= STATUS.processing then return REPLY.WRONG_STATUS end
  if attempts ~= attempt then return REPLY.LEASE_LOST end
  return nil
end

local function check_attempt(job_key, attempt)
  local f = redis.call('HMGET', job_key, F.status, F.attempts)
  return attempt_refused(f[1], f[2], attempt)
end

local function cancel_or(job_key, otherwise)
  if redis.call('HGET', job_key, F.cancel_requested) == '1' then return REPLY.CANCEL_REQUESTED end
  return otherwise
end

-- intervals_after: the job's intervals with this run appended, from its
-- attempts, started_at and intervals already read.
local function intervals_after(attempts, started_at, intervals, now, outcome)
  local run = attempts .. ':' .. started_at .. ':' .. int(now) .. ':' .. outcome
  if intervals and intervals ~= '' then run = intervals .. ',' .. run end
  return run
end

local function end_attempt(job_key, now, outcome)
  local f = redis.call('HMGET', job_key, F.attempts, F.started_at, F.intervals)
  redis.call('HSET', job_key, F.intervals, intervals_after(f[1], f[2], f[3], now, outcome))
end
