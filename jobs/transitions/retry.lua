--[[
  retry: the attempt holding a job hit a transient error and gives the job
  back: `processing` -> `queued`, to be re-published by the sweep once the
  backoff has passed.  The slot stays taken, so the parent's cap holds.
  The caller decides whether attempts remain; when none do it calls
  complete with 'failed' instead.

  Keys (spec: retry.py):
    job, parent        the job's hash; its parent's (the job's own for a single job)
    leases, queued     the global indexes
    roots_<status>     the listing's sets of the root's kind
  Derived from A.prefix: the parent's per-status children sets.

  Args: job_id, attempt (from claim), prefix, backoff_ms, error_code and
    error of this attempt

  Reply: {OK} queued again, or {NO_JOB}, {WRONG_STATUS}, {LEASE_LOST} as heartbeat;
    {CANCEL_REQUESTED}: nothing written, the job is to end cancelled rather than run again
]]
-- @include attempt
-- @include indexes

local refused = check_attempt(K.job, A.attempt) or cancel_or(K.job, nil)
if refused then return reply{code = refused} end

local f = redis.call('HMGET', K.job, F.kind, F.index)
local now = now_us()
end_attempt(K.job, now, STAGE.retrying)
redis.call('HSET', K.job, F.status, STATUS.queued, F.queued_at, int(now), F.stage, STAGE.retrying,
  F.last_error_code, A.error_code, F.last_error, A.error)
redis.call('ZREM', K.leases, A.job_id)
redis.call('ZADD', K.queued, ms_of(now) + A.backoff_ms, A.job_id)
if f[1] == KIND.child then
  redis.call('HINCRBY', K.parent, count_field(STATUS.processing), -1)
  redis.call('HINCRBY', K.parent, count_field(STATUS.queued), 1)
  move_child(A.prefix, A.job_id, f[2], STATUS.processing, STATUS.queued)
else
  move_root(K.job, A.job_id, STATUS.processing, STATUS.queued)
end
return reply{code = REPLY.OK}
