--[[
  claim: a worker takes a `queued` job at task start: `queued` -> `processing`,
  attempts + 1, started_at, and a lease.  Only a queued job can be claimed,
  so a duplicate or late Celery message for the same job is a no-op.

  Input:
    KEYS[1]  job key
    KEYS[2]  payload key
    KEYS[3]  leases index
    KEYS[4]  queued index
    KEYS[5]  parent key (the job key again for a job without a parent)
    ARGV[1]  job id
    ARGV[2]  lease, ms

  Output:
    {1, attempt, model, content_type, options, payload}  claimed; `attempt`
        is the token every later call of this attempt must present
        (payload is false when it is missing)
    {-1}          no such job
    {-2, status}  not queued (already claimed, finished or held): do nothing
]]
-- @include common

local job_key, payload_key, leases, queued_index, parent_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local job_id, lease_ms = ARGV[1], tonumber(ARGV[2])

local f = redis.call('HMGET', job_key, 'status', 'kind', 'model', 'content_type', 'options')
if not f[1] then return {-1} end
if f[1] ~= 'queued' then return {-2, f[1]} end

local now = now_us()
local attempt = redis.call('HINCRBY', job_key, 'attempts', 1)
redis.call('HSET', job_key,
  'status', 'processing', 'started_at', int(now), 'stage', 'started', 'progress', '0')
redis.call('ZADD', leases, ms_of(now) + lease_ms, job_id)
redis.call('ZREM', queued_index, job_id)

if f[2] == 'child' then
  redis.call('HINCRBY', parent_key, 'n_queued', -1)
  redis.call('HINCRBY', parent_key, 'n_processing', 1)
  local p = redis.call('HMGET', parent_key, 'started_at', 'status')
  if p[1] == '' and not TERMINAL[p[2]] then
    redis.call('HSET', parent_key, 'started_at', int(now), 'status', 'processing', 'stage', 'processing')
  end
end

return {1, attempt, f[3], f[4], f[5], redis.call('GET', payload_key)}
