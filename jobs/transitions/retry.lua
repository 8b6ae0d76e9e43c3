--[[
  retry: the attempt holding a job hit a transient error and gives the job
  back: `processing` -> `queued`, to be re-published by the sweep once the
  backoff has passed.  The slot stays taken, so the parent's cap holds.
  The caller decides whether attempts remain; when none do it calls
  complete with 'failed' instead.

  Keys:
    job            the job's hash
    parent         its parent's key (the job's own for a single job)
    leases         the bucket's index of leases
    queued         the bucket's index of queued jobs
    ROOT_KEYS      (spec.py) the listing's sets of the root's kind
  Derived from A.prefix: the parent's per-status children sets; from the
  job's id and the time, its tenant's usage record of the day (usage.lua).

  Args:
    job_id
    attempt        the token from claim
    prefix         the group's hash-tagged prefix
    backoff_ms     how long until the sweep re-publishes it
    error_code     this attempt's
    error          this attempt's
    usage_keep_s   how long a usage record is kept after its day (usage.lua)

  Reply: {OK} queued again, or {NO_JOB}, {WRONG_STATUS}, {LEASE_LOST} as heartbeat;
    {CANCEL_REQUESTED}: nothing written, the job is to end cancelled rather than run again
]]
-- @include requeue

local refused = check_attempt(K.job, A.attempt) or cancel_or(K.job, nil)
if refused then return reply{code = refused} end

local now = now_us()
back_to_queued(K.job, A.job_id, A.prefix, STAGE.retrying, A.error_code, A.error, A.backoff_ms, now,
  now + A.backoff_ms * 1000)
return reply{code = REPLY.OK}
