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
    ARGV[3]  token of this call, the same when a client sends the call again

  Output:
    {1, attempt, model, content_type, options, payload}  claimed; `attempt`
        is the token every later call of this attempt must present
        (payload is false when it is missing)
    {-1}          no such job
    {-2, status}  not queued (already claimed, finished or held): do nothing
    The same call sent again (same token: its reply was lost to a dropped
    connection and the client retried) answers with the same claim.
]]
-- @include common
-- @include claim

local job_key, payload_key, leases, queued_index, parent_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local job_id, lease_ms, token = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local f = redis.call('HMGET', job_key, 'status', 'kind', 'model', 'content_type', 'options',
  'attempts', 'claim_token')
if not f[1] then return {-1} end
if f[1] ~= 'queued' then
  if f[1] == 'processing' and token ~= '' and f[7] == token then
    return {1, tonumber(f[6]), f[3], f[4], f[5], redis.call('GET', payload_key)}
  end
  return {-2, f[1]}
end

local attempt = claim_job(job_key, job_id, f[2], parent_key, leases, queued_index, lease_ms, now_us())
redis.call('HSET', job_key, 'claim_token', token)
return {1, attempt, f[3], f[4], f[5], redis.call('GET', payload_key)}
