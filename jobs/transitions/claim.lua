--[[
  claim: a worker takes a `queued` job at task start: `queued` -> `processing`,
  attempts + 1, started_at, and a lease.  Only a queued job can be claimed,
  so a duplicate or late Celery message for the same job is a no-op.

  Keys (spec: claim.py):
    job, payload     the job's hash and document
    parent           its parent's key (the job's own for a single job)
    leases, queued   the global indexes
    call             the record of this call (its token), kept A.record_ms
    roots_<status>   the listing's sets of the root's kind
  Derived from A.prefix: the parent's per-status children sets.

  Args: job_id, prefix, lease_ms, record_ms

  Reply:
    {OK, attempt, try_number, model, content_type, options, payload, waited_us}  claimed;
        `attempt` is the token every later call of this attempt must present,
        `try_number` its number since the job was last sent (a redrive starts the
        count again; max_attempts bounds it); payload is false when missing;
        `waited_us` the child's wait from its release into a freed slot to its
        start, -1 for a job released at its creation
    {NO_JOB}
    {WRONG_STATUS, status=...}  not queued (already claimed, finished or held): do nothing
    The same call sent again (the same token, so the same call record: its
    reply was lost to a dropped connection and the client retried) answers
    with the same claim.
]]
-- @include claim

read_fields(K.job, {F.status, F.kind, F.model, F.content_type, F.options, F.attempts, F.attempts_base, F.index,
  F.created_at, F.queued_at})
local function field(name) return field_of(K.job, name) end
local status = field(F.status)
if not status then return reply{code = REPLY.NO_JOB} end
local function claimed(attempt)
  return reply{code = REPLY.OK, attempt = attempt, try_number = attempt - (tonumber(field(F.attempts_base)) or 0),
               model = field(F.model), content_type = field(F.content_type), options = field(F.options),
               payload = redis.call('GET', K.payload), waited_us = waited_us(K.job)}
end

if status ~= STATUS.queued then
  -- The same call again: it claimed the attempt the job is still at.
  if status == STATUS.processing and redis.call('GET', K.call) == field(F.attempts) then
    return claimed(tonumber(field(F.attempts)))
  end
  return reply{code = REPLY.WRONG_STATUS, status = status}
end

local attempt = claim_job(K.job, A.job_id, field(F.kind), A.prefix, A.lease_ms, now_us())
write_pending()
redis.call('SET', K.call, int(attempt), 'PX', A.record_ms)
return claimed(attempt)
