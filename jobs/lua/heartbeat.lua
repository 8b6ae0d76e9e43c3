--[[
  heartbeat: extends the lease of a job still held by this attempt.

  Input:
    KEYS[1]  job key
    KEYS[2]  leases index
    ARGV[1]  job id
    ARGV[2]  attempt (from claim)
    ARGV[3]  lease, ms

  Output:
    1   extended
    -1  no such job
    -2  not processing any more
    -3  another attempt holds the job: this one has lost its lease
]]
-- @include common

local job_key, leases = KEYS[1], KEYS[2]
local job_id, attempt, lease_ms = ARGV[1], ARGV[2], tonumber(ARGV[3])

local f = redis.call('HMGET', job_key, 'status', 'attempts')
if not f[1] then return -1 end
if f[1] ~= 'processing' then return -2 end
if f[2] ~= attempt then return -3 end
redis.call('ZADD', leases, ms_of(now_us()) + lease_ms, job_id)
return 1
