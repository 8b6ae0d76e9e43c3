--[[
  republish: the sweep finds a job still `queued` past its publish deadline
  (its message was lost, e.g. the publisher died right after a release, or
  a retry's backoff has passed) and pushes the deadline on before sending
  a fresh message.  A duplicate message is harmless: claim takes a job once.

  Input:
    KEYS[1]  job key
    KEYS[2]  queued index
    ARGV[1]  job id
    ARGV[2]  requeue delay, ms

  Output:
    {1, model}  publish a message for the job now
    {0}         nothing to do (claimed meanwhile, or not yet due)
]]
-- @include common

local job_key, queued_index = KEYS[1], KEYS[2]
local job_id, requeue_ms = ARGV[1], tonumber(ARGV[2])

local f = redis.call('HMGET', job_key, 'status', 'model')
if f[1] ~= 'queued' then
  redis.call('ZREM', queued_index, job_id)
  return {0}
end
local now_ms = tonumber(ms_of(now_us()))
local due = redis.call('ZSCORE', queued_index, job_id)
if due and tonumber(due) > now_ms then return {0} end
redis.call('ZADD', queued_index, now_ms + requeue_ms, job_id)
return {1, f[2]}
