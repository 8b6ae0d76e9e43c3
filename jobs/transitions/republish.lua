--[[
  republish: the sweep finds a job still `queued` past its publish deadline
  (its message was lost, e.g. the publisher died right after a release, or
  a retry's backoff has passed) and pushes the deadline on before sending
  a fresh message.  A duplicate message is harmless: claim takes a job once.

  Keys:
    job            the job's hash
    queued         the bucket's index of queued jobs, scored by publish deadline

  Args:
    job_id
    requeue_ms     the next deadline, from now

  Reply:
    {OK, model, priority}  publish a message for the job now, to its model's
                           queue of that lane
    {NOTHING}    claimed meanwhile, or not yet due
]]
-- @include common

local f = redis.call('HMGET', K.job, F.status, F.model, F.priority)
if f[1] ~= STATUS.queued then
  redis.call('ZREM', K.queued, A.job_id)
  return reply{code = REPLY.NOTHING}
end
local now_ms = tonumber(ms_of(now_us()))
local due = redis.call('ZSCORE', K.queued, A.job_id)
if due and tonumber(due) > now_ms then return reply{code = REPLY.NOTHING} end
redis.call('ZADD', K.queued, now_ms + A.requeue_ms, A.job_id)
return reply{code = REPLY.OK, model = f[2], priority = lane_of(f[3])}
