--[[
  retry: the attempt holding a job hit a transient error and gives the job
  back: `processing` -> `queued`, to be re-published by the sweep once the
  backoff has passed.  The slot stays taken, so the parent's cap holds.
  The caller decides whether attempts remain; when none do it calls
  complete with 'failed' instead.

  Input:
    KEYS[1]  job key
    KEYS[2]  leases index
    KEYS[3]  queued index
    KEYS[4]  parent key (the job key again for a job without a parent)
    ARGV[1]  job id
    ARGV[2]  attempt (from claim)
    ARGV[3]  backoff, ms
    ARGV[4]  error_code of this attempt
    ARGV[5]  error message of this attempt

  Output:
    1   queued again
    -1  no such job
    -2  not processing
    -3  another attempt holds the job
]]
-- @include common

local job_key, leases, queued_index, parent_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local job_id, attempt, backoff_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])

local f = redis.call('HMGET', job_key, 'status', 'attempts', 'kind')
if not f[1] then return -1 end
if f[1] ~= 'processing' then return -2 end
if f[2] ~= attempt then return -3 end

local now = now_us()
redis.call('HSET', job_key, 'status', 'queued', 'queued_at', int(now), 'stage', 'retrying',
  'last_error_code', ARGV[4], 'last_error', ARGV[5])
redis.call('ZREM', leases, job_id)
redis.call('ZADD', queued_index, ms_of(now) + backoff_ms, job_id)
if f[3] == 'child' then
  redis.call('HINCRBY', parent_key, 'n_processing', -1)
  redis.call('HINCRBY', parent_key, 'n_queued', 1)
end
return 1
