--[[
  progress: records how far the attempt holding a job has got (per page).

  Keys:
    job            the job's hash

  Args:
    attempt        the token from claim
    stage          e.g. 'page 2/5'
    progress       0..1

  Reply: {OK} recorded, or heartbeat's refusals: {NO_JOB}, {WRONG_STATUS}, {LEASE_LOST};
    {CANCEL_REQUESTED}: a client asked to cancel the job, nothing recorded: stop and end it cancelled
]]
-- @include attempt

local refused = check_attempt(K.job, A.attempt)
if refused then return reply{code = refused} end
if cancel_or(K.job, nil) then return reply{code = REPLY.CANCEL_REQUESTED} end
redis.call('HSET', K.job, F.stage, A.stage, F.progress, A.progress)
return reply{code = REPLY.OK}
