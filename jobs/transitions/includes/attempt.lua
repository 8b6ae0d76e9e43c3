-- check_attempt: the precondition of every report an attempt makes on its
-- job (heartbeat, progress, retry, complete): the job exists, is
-- processing, and is still at this attempt.  Returns nil when it holds, or
-- the reply code that refuses the call (attempt_refused, from the job's
-- status and attempts already read).
-- cancel_or: REPLY.CANCEL_REQUESTED once a client asked to cancel the job, else `otherwise`.
-- end_attempt: appends the attempt's run to the job's intervals (F.intervals
-- says how): every attempt that held a slot, however it ended.
-- @needs pending

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

local function end_attempt(job_key, now, outcome)
  read_fields(job_key, {F.attempts, F.started_at, F.intervals})
  local run = field_of(job_key, F.attempts) .. ':' .. field_of(job_key, F.started_at) .. ':' .. int(now)
    .. ':' .. outcome
  local before = field_of(job_key, F.intervals)
  if before and before ~= '' then run = before .. ',' .. run end
  set_fields(job_key, F.intervals, run)
end
