--[[
  reclaim: the sweep takes back a job whose lease expired (its worker died
  or hung without heartbeats).  While attempts remain it goes back to
  `queued` (the next claim makes it attempt + 1); after the last attempt it
  fails with error_code `lease_expired`, exactly as complete would end it.
  A late completion of the dead attempt is then refused by complete.

  Input:
    KEYS[1]  job key
    KEYS[2]  events stream of the job's root
    KEYS[3]  leases index
    KEYS[4]  queued index
    KEYS[5]  active parents index
    KEYS[6]  due parents index
    KEYS[7]  parent key (the job key again for a job without a parent)
    ARGV[1]  job id
    ARGV[2]  max attempts
    ARGV[3]  release limit
    ARGV[4]  requeue delay, ms
    ARGV[5]  group prefix

  Output:
    {0}                      nothing to do (lease renewed, or job no longer processing)
    {1, job_id, model}       queued again: publish a message for it
    {2, parent_finalized, child_id, model, ...}  failed `lease_expired`;
                             followed by children released into its slot
]]
-- @include common
-- @include release
-- @include finish

local job_key, events_key, leases, queued_index = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local active_index, due_index, parent_key = KEYS[5], KEYS[6], KEYS[7]
local job_id, max_attempts = ARGV[1], tonumber(ARGV[2])
local release_limit, requeue_ms, prefix = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]

local now = now_us()
local deadline = redis.call('ZSCORE', leases, job_id)
if not deadline then return {0} end
local f = redis.call('HMGET', job_key, 'status', 'attempts', 'kind', 'parent_id', 'model')
if f[1] ~= 'processing' then
  redis.call('ZREM', leases, job_id)
  return {0}
end
if tonumber(deadline) > tonumber(ms_of(now)) then return {0} end

redis.call('ZREM', leases, job_id)
if tonumber(f[2]) < max_attempts then
  redis.call('HSET', job_key, 'status', 'queued', 'queued_at', int(now), 'stage', 'reclaimed',
    'last_error_code', 'lease_expired')
  redis.call('ZADD', queued_index, ms_of(now) + requeue_ms, job_id)
  if f[3] == 'child' then
    redis.call('HINCRBY', parent_key, 'n_processing', -1)
    redis.call('HINCRBY', parent_key, 'n_queued', 1)
  end
  return {1, job_id, f[5]}
end

finish_job(job_key, events_key, job_id, f[3], f[4], f[5], 'failed', 'lease_expired',
  'the worker running this job stopped renewing its lease ' .. f[2] .. ' times', now)
local out = {2, 1}
if f[3] == 'child' then
  local finalized, released = child_finished(parent_key, prefix, f[4], 'processing', 'failed',
    events_key, queued_index, active_index, due_index, release_limit, requeue_ms, now)
  out[2] = finalized
  for _, v in ipairs(released) do out[#out + 1] = v end
end
return out
