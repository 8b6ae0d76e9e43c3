-- check_attempt: the precondition of every report an attempt makes on its
-- job (heartbeat, progress, retry, complete): the job exists, is
-- processing, and is still at this attempt.  Returns nil when it holds, or
-- the reply code that refuses the call.
-- cancel_or: REPLY.CANCEL_REQUESTED once a client asked to cancel the job, else `otherwise`.
-- end_attempt: appends the attempt's run to the job's intervals (F.intervals
-- says how): every attempt that held a slot, however it ended.
-- @needs common

local function check_attempt(job_key, attempt)
  local f = redis.call('HMGET', job_key, F.status, F.attempts)
  if not f[1] then return REPLY.NO_JOB end
  if f[1] ~= STATUS.processing then return REPLY.WRONG_STATUS end
  if f[2] ~= attempt then return REPLY.LEASE_LOST end
  return nil
end

local function cancel_or(job_key, otherwise)
  if redis.call('HGET', job_key, F.cancel_requested) == '1' then return REPLY.CANCEL_REQUESTED end
  return otherwise
end

local function end_attempt(job_key, now, outcome)
  local f = redis.call('HMGET', job_key, F.attempts, F.started_at, F.intervals)
  local run = f[1] .. ':' .. f[2] .. ':' .. int(now) .. ':' .. outcome
  if f[3] and f[3] ~= '' then run = f[3] .. ',' .. run end
  redis.call('HSET', job_key, F.intervals, run)
end
