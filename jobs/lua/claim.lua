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
    KEYS[6]  call record of this call (its token), kept ARGV[3] ms
    ARGV[1]  job id
    ARGV[2]  lease, ms
    ARGV[3]  how long the call record is kept, ms

  Output:
    {1, attempt, model, content_type, options, payload}  claimed; `attempt`
        is the token every later call of this attempt must present
        (payload is false when it is missing)
    {-1}          no such job
    {-2, status}  not queued (already claimed, finished or held): do nothing
    The same call sent again (the same token, so the same call record: its
    reply was lost to a dropped connection and the client retried) answers
    with the same claim.
]]
-- @include common
-- @include claim

local job_key, payload_key, leases, queued_index, parent_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local call_key = KEYS[6]
local job_id, lease_ms, record_ms = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

local f = redis.call('HMGET', job_key, 'status', 'kind', 'model', 'content_type', 'options', 'attempts')
if not f[1] then return {-1} end
local function claimed(attempt)
  return {1, attempt, f[3], f[4], f[5], redis.call('GET', payload_key)}
end

if f[1] ~= 'queued' then
  -- The same call again: it claimed the attempt the job is still at.
  if f[1] == 'processing' and redis.call('GET', call_key) == f[6] then
    return claimed(tonumber(f[6]))
  end
  return {-2, f[1]}
end

local attempt = claim_job(job_key, job_id, f[2], parent_key, leases, queued_index, lease_ms, now_us())
redis.call('SET', call_key, attempt, 'PX', record_ms)
return claimed(attempt)
