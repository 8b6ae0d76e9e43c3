--[[
  cancel: a client cancels a single job, a child or a whole group.

  A job that has not started (`held`, `queued`) ends `cancelled` at once,
  with its audit event; a queued job's Celery message then finds it not
  claimable, and a worker taking from the ready index drops its entry.  A `processing` job is asked to stop: it gets a cancel mark,
  which its attempt sees at its next heartbeat or page and answers by ending
  it `cancelled` (complete); a kept slot is never taken for it.  A cancelled
  child frees its slot like any finished child.  Cancelling a parent marks
  it, cancels every child not yet started, marks the running ones, and the
  parent ends `cancelled` with its one audit event once the last child is
  terminal (here, if none is running).  Completed children keep their results.
  The tenant slots its cancelled queued children free go to the tenant's
  other groups waiting for one (release.lua).

  Keys:
    job            the job's hash (the parent's, for a group)
    events         the audit stream of the job's root
    webhooks       the index of terminal jobs whose callback is due
    RELEASE_KEYS   (spec.py) parent: its parent's key (the job's own for a
                   single job or a parent)
    ROOT_KEYS      (spec.py) the listing's sets of the root's kind
  Derived from A.prefix: the group's children and their per-status sets;
  from the ids, the tenant's keys and its waiting groups (release.lua); the
  ready indexes its queued jobs leave, and the bucket's turns, where each
  gives its tenant its turn back (ready.lua).

  Args:
    job_id
    RELEASE_ARGS   (spec.py)

  Reply:
    {OK, status, finalized, cancelled_unstarted, released...}  `status` is
        the job's status now: `cancelled`, or `processing` while a running
        attempt is asked to stop; cancelled_unstarted the jobs it ended
        before they started (finish.lua); released are the wake-ups the
        children the freed slots went to need (ready.lua)
    {NO_JOB}
    {WRONG_STATUS, status}  already terminal: nothing written
]]
-- @include finish

local f = redis.call('HMGET', K.job, F.status, F.kind, F.parent_id, F.index, F.model, F.priority)
if not f[1] then return reply{code = REPLY.NO_JOB} end
if TERMINAL[f[1]] then return reply{code = REPLY.WRONG_STATUS, status = f[1]} end
local now = now_us()
local why = 'cancelled by a client'

if f[2] == KIND.parent then
  redis.call('HSET', K.job, F.cancel_requested, '1')
  cancel_children(A.prefix, A.job_id, STATUS.held, why, now)
  cancel_children(A.prefix, A.job_id, STATUS.queued, why, now)
  for _, id in ipairs(redis.call('ZRANGE', children_key_of(A.prefix, STATUS.processing), 0, -1)) do
    redis.call('HSET', job_key_of(A.prefix, id), F.cancel_requested, '1', F.stage, STAGE.cancelling)
  end
  redis.call('ZREM', K.due, A.job_id)
  -- Nothing of its own is left to release; the tenant's waiting groups get the freed slots.
  release_children(A.prefix, A.job_id, A.release_limit, A.requeue_ms, now)
  local finalized = finalize_parent_if_done(A.job_id, now)
  return reply{code = REPLY.OK, status = redis.call('HGET', K.job, F.status), finalized = finalized,
               cancelled_unstarted = cancelled_unstarted(), released = wake_ups(now, A.requeue_ms)}
end

if f[1] == STATUS.processing then
  redis.call('HSET', K.job, F.cancel_requested, '1', F.stage, STAGE.cancelling)
  return reply{code = REPLY.OK, status = STATUS.processing, finalized = 0}
end

-- held or queued: it ends here
local job = {id = A.job_id, kind = f[2], parent_id = f[3], index = f[4], model = f[5]}
redis.call('ZREM', K.queued, A.job_id)
-- Out of the ready index at once, so that the wake-ups' count is right, and its turn given back (ready.lua).
if f[1] == STATUS.queued then leave_ready_cancelled(A.job_id, f[5], lane_of(f[6])) end
finish_job(K.job, job, A.prefix, f[1], STATUS.cancelled, '', why, now)
local out = {code = REPLY.OK, status = STATUS.cancelled, finalized = 1}
if job.kind == KIND.child then
  out.finalized = child_finished(A.prefix, job.parent_id, f[1], STATUS.cancelled,
    A.release_limit, A.requeue_ms, now)
  out.released = wake_ups(now, A.requeue_ms)
end
out.cancelled_unstarted = cancelled_unstarted()
save_turns()  -- a child's wake_ups saved them; a single job's are saved here
return reply(out)
