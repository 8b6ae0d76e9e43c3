-- check_attempt: the precondition of every report an attempt makes on its
-- job (heartbeat, progress, retry, complete): the job exists, is
-- processing, and is still at this attempt.  Returns nil when it holds, or
-- the reply code that refuses the call.
-- @needs common

local function check_attempt(job_key, attempt)
  local f = redis.call('HMGET', job_key, F.status, F.attempts)
  if not f[1] then return REPLY.NO_JOB end
  if f[1] ~= STATUS.processing then return REPLY.WRONG_STATUS end
  if f[2] ~= attempt then return REPLY.LEASE_LOST end
  return nil
end
