--[[
  heartbeat: extends the lease of a job still held by this attempt.

  Keys:
    job            the job's hash
    leases         the bucket's index of leases

  Args:
    job_id
    attempt        the token from claim
    lease_ms       the lease's new length, from now

  Reply:
    {OK}            extended
    {NO_JOB}
    {WRONG_STATUS}  not processing any more
    {LEASE_LOST}    another attempt holds the job: this one has lost its lease
    {CANCEL_REQUESTED}  extended, but a client asked to cancel the job: stop and end it cancelled
]]
-- @include attempt

local refused = check_attempt(K.job, A.attempt)
if refused then return reply{code = refused} end
redis.call('ZADD', K.leases, ms_of(now_us()) + A.lease_ms, A.job_id)
return reply{code = cancel_or(K.job, REPLY.OK)}
