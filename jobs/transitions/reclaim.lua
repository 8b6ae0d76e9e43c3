--[[
  reclaim: the sweep takes back a job whose lease expired (its worker died
  or hung without heartbeats).  While attempts remain it goes back to
  `queued` (the next claim makes it attempt + 1); after the last attempt it
  fails with error_code `lease_expired`, exactly as complete would end it.
  A late completion of the dead attempt is then refused by complete.  A job
  a client asked to cancel ends `cancelled` instead of running again.

  Keys:
    job            the job's hash
    events         its root's audit stream
    leases         the bucket's index of leases
    webhooks       the index of terminal jobs whose callback is due
    RELEASE_KEYS   (spec.py) parent: its parent's key (the job's own for a single job)
    ROOT_KEYS      (spec.py) the listing's sets of the root's kind
  Derived from A.prefix: the group's other jobs (children released into a
  failed child's slot), the per-status children sets; from the ids, the
  tenant's keys and its waiting groups (release.lua), and its usage record
  of the day (usage.lua).

  Args:
    job_id
    max_attempts   the attempts a job gets before it fails `lease_expired`
    usage_keep_s   how long a usage record is kept after its day (usage.lua)
    RELEASE_ARGS   (spec.py)

  Reply:
    {NOTHING}                       the lease was renewed, or the job is no longer processing
    {OK, requeued=1, model, priority}  queued again: publish a message for it
                                    (to its model's queue of that lane)
    {OK, requeued=0, finalized, model, priority, cancelled_unstarted, children, released...}
                                    failed `lease_expired` (or cancelled,
                                    when that was asked); cancelled_unstarted
                                    the held children a fail-fast group
                                    then cancelled (finish.lua); children
                                    how many were released into its slot;
                                    then the wake-ups they need (ready.lua)
]]
-- @include finish
-- @include requeue

local now = now_us()
local deadline = redis.call('ZSCORE', K.leases, A.job_id)
if not deadline then return reply{code = REPLY.NOTHING} end
local f = redis.call('HMGET', K.job, F.status, F.attempts, F.kind, F.parent_id, F.model, F.index,
  F.cancel_requested, F.attempts_base, F.priority)
if f[1] ~= STATUS.processing then
  redis.call('ZREM', K.leases, A.job_id)
  return reply{code = REPLY.NOTHING}
end
if tonumber(deadline) > tonumber(ms_of(now)) then return reply{code = REPLY.NOTHING} end

redis.call('ZREM', K.leases, A.job_id)
local cancelled = f[7] == '1'
local tries = tonumber(f[2]) - (tonumber(f[8]) or 0)  -- since the last redrive
if tries < A.max_attempts and not cancelled then
  back_to_queued(K.job, A.job_id, A.prefix, STAGE.reclaimed, ERROR.lease_expired,
    'the worker running attempt ' .. f[2] .. ' stopped renewing its lease', A.requeue_ms, now, now)
  return reply{code = REPLY.OK, requeued = 1, model = f[5], priority = lane_of(f[9])}
end

local job = {id = A.job_id, kind = f[3], parent_id = f[4], model = f[5], index = f[6]}
local status, error_code = STATUS.failed, ERROR.lease_expired
local why = 'the worker running this job stopped renewing its lease ' .. tries .. ' times'
if cancelled then
  status, error_code, why = STATUS.cancelled, '', 'cancelled; its worker stopped renewing its lease'
end
end_attempt(K.job, now, status)
usage_attempt_ended(K.job, A.job_id, job.kind, job.model, nil, now, A.usage_keep_s)
finish_job(K.job, job, A.prefix, STATUS.processing, status, error_code, why, now)
local out = {code = REPLY.OK, requeued = 0, finalized = 1, model = f[5], priority = lane_of(f[9])}
if job.kind == KIND.child then
  out.finalized = child_finished(A.prefix, job.parent_id, STATUS.processing, status,
    A.release_limit, A.requeue_ms, now)
  out.children = children_released
  out.released = wake_ups(now, A.requeue_ms)
end
out.cancelled_unstarted = cancelled_unstarted()
return reply(out)
