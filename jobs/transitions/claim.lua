--[[
  claim: a worker takes a `queued` job at task start: `queued` -> `processing`,
  attempts + 1, started_at, and a lease.  Only a queued job can be claimed,
  so a duplicate or late Celery message for the same job is a no-op.

  Keys:
    job            the job's hash
    payload        its document (a split's child reads its parent's itself)
    parent         its parent's key (the job's own for a single job)
    leases         the bucket's index of leases
    queued         the bucket's index of queued jobs
    call           the record of this call (its token), kept A.record_ms
    ROOT_KEYS      (spec.py) the listing's sets of the root's kind
  Derived from A.prefix: the parent's per-status children sets; from the
  job's model, its ready index (ready.lua), which the job leaves, and the
  bucket's turns: the lane's clock moves to the job's turn.

  Args:
    job_id
    prefix         the group's hash-tagged prefix
    lease_ms       how long the lease holds before a heartbeat must extend it
    record_ms      how long the record of this call is kept

  Reply:
    {OK, attempt, try_number, model, content_type, options, payload, waited_us, source_pages, queue_wait_us,
        traceparent}
        claimed;
        `attempt` is the token every later call of this attempt must present,
        `try_number` its number since the job was last sent (a redrive starts the
        count again; max_attempts bounds it); payload is false when missing,
        and for a split's child, which answers its source_pages ("first-last",
        of its parent's document, which the worker reads itself: a document of
        many MB is not copied through here once per child) instead;
        `waited_us` the child's wait from its release into a freed slot to its
        start, -1 for a job released at its creation; `queue_wait_us` its
        wait from its creation to this start (its created_at to its started_at);
        `traceparent` the one stored at the job's creation ('' when none was:
        tracing was off)
    {NO_JOB}
    {WRONG_STATUS, status}  not queued (already claimed, finished or held): do nothing
    The same call sent again (the same token, so the same call record: its
    reply was lost to a dropped connection and the client retried) answers
    with the same claim.
]]
-- @include claim
-- @include ready

local f = redis.call('HMGET', K.job, F.status, F.kind, F.model, F.content_type, F.options, F.attempts,
  F.attempts_base, F.source_pages, F.traceparent, F.priority)
if not f[1] then return reply{code = REPLY.NO_JOB} end
local function claimed(attempt)
  local source_pages = f[8] or ''
  local payload = false
  if source_pages == '' then payload = redis.call('GET', K.payload) end
  local waited, queue_wait = waits_us(K.job)
  return reply{code = REPLY.OK, attempt = attempt, try_number = attempt - (tonumber(f[7]) or 0),
               model = f[3], content_type = f[4], options = f[5], payload = payload,
               waited_us = waited, source_pages = source_pages, queue_wait_us = queue_wait,
               traceparent = f[9] or ''}
end

if f[1] ~= STATUS.queued then
  -- The same call again: it claimed the attempt the job is still at.
  if f[1] == STATUS.processing and redis.call('GET', K.call) == f[6] then
    return claimed(tonumber(f[6]))
  end
  return reply{code = REPLY.WRONG_STATUS, status = f[1]}
end

local attempt = claim_job(K.job, A.job_id, f[2], A.prefix, A.lease_ms, now_us())
leave_ready_claimed(A.job_id, f[3], lane_of(f[10]))
save_turns()
redis.call('SET', K.call, attempt, 'PX', A.record_ms)
return claimed(attempt)
