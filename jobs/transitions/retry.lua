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
-- @include requeue

local refused = check_attempt(K.job, A.attempt) or cancel_or(K.job, nil)
if refused then return reply{code = refused} end

back_to_queued(K.job, A.job_id, A.prefix, STAGE.retrying, A.error_code, A.error, A.backoff_ms, now_us())
return reply{code = REPLY.OK}
