--[[
  complete: the attempt holding a job ends it, successfully or not:
  `processing` -> `completed` | `failed` | `cancelled` (the attempt stopped
  because a client cancelled the job), finished_at, the job's one audit
  event; for a child, its slot goes to the next held children of its parent
  and, if it was the parent's last unfinished child, the parent is finalized
  in the same step (status, finished_at, the parent's audit event).

  A finishing worker may take its next job in the same step (A.next_lease_ms
  > 0): the job of the earliest turn of its model (A.next_model) in the
  ready index, interactive lane first (of the other models it serves too,
  A.next_interactive), tenants taking turns, of whatever group or single
  job (ready.lua), is claimed for it as
  `claim` would, and needs no Celery message.  The worker thus goes from one
  job to the next with no broker round trip; both caps (the group's, its
  tenant's) hold because they are decided when a job is released, before
  any worker can take it; and tenants take turns in each lane, each
  tenant's work in the order it was queued, so no group or tenant waits
  behind a run of another's jobs.  The wake-ups answered are for the ready jobs left
  that no wake-up counts for yet, after this worker's own take.

  Keys:
    job            the job's hash
    result         its result (its document stays, beside them)
    events         the audit stream of the job's root
    leases         the bucket's index of leases
    webhooks       the index of terminal jobs whose callback is due
    call           the record of this call (its token), kept A.record_ms
    RELEASE_KEYS   (spec.py) parent: its parent's key (the job's own for a single job)
    ROOT_KEYS      (spec.py) the listing's sets of the root's kind
  Derived from A.prefix: the group's other jobs (the released children), the
  per-status children sets; from the ids, the tenant's keys and the groups
  its release served (release.lua), and the group keys of the job taken
  (its parent, payload, its tenant's listing sets); from the models, their
  ready indexes and wake-ups (ready.lua); from the job's id and the time,
  its tenant's usage record of the day (usage.lua).

  Args:
    job_id
    attempt        the token from claim
    status         'completed' | 'failed' | 'cancelled'
    result         JSON, or ''
    error_code     why it failed ('' if it did not)
    error          its message
    next_lease_ms  the lease of the job claimed for this worker (0: claim
                   nothing)
    next_model     the model of the job to claim
    next_interactive  the models (comma-separated) whose interactive jobs
                   come before next_model's batch ones: those the worker
                   serves ('' for next_model's alone)
    record_ms      how long the record of this call is kept
    units          what the completed job used, JSON (jobs/usage.py: ocr_pages,
                   text_layer_pages, input_bytes; read only when completed)
    usage_keep_s   how long a usage record is kept after its day (usage.lua)
    RELEASE_ARGS   (spec.py)

  Reply:
    {OK, finalized, next_job_id, next_attempt, next_try_number, next_model,
        next_content_type, next_options, next_payload, next_waited_us,
        next_source_pages, next_queue_wait_us, next_traceparent, cancelled_unstarted, released...}
        done; next_* is the job claimed for this worker, as claim answers
        it (next_job_id false when none; a split's child answers its
        source_pages, not a payload); cancelled_unstarted the held children
        a fail-fast group cancelled (finish.lua; a replay answers them
        again, the first answer having been lost); released are the
        wake-ups to publish (ready.lua)
    {NO_JOB}
    {WRONG_STATUS}  not processing: a late or duplicate attempt, nothing written
    {LEASE_LOST}    another attempt holds the job (this one lost its lease): nothing written
    The same call sent again (same token: its reply was lost to a dropped
    connection and the client retried) answers as the first time did, from
    its call record: the job it claimed, if that attempt still holds it,
    and the wake-ups it answered (never sent: the first answer was lost).
    Nothing is written.
]]
-- @include attempt
-- @include claim
-- @include finish
-- @include usage

local function with_claim(out, key, id, attempt, prefix)
  local c = redis.call('HMGET', key, F.model, F.content_type, F.options, F.attempts_base, F.source_pages,
    F.traceparent)
  out.next_job_id, out.next_attempt, out.next_model = id, attempt, c[1]
  out.next_try_number = attempt - (tonumber(c[4]) or 0)
  out.next_content_type, out.next_options = c[2], c[3]
  out.next_source_pages = c[5] or ''
  out.next_traceparent = c[6] or ''
  -- A split's child reads its pages of the parent's document itself (the worker keeps the last one).
  if out.next_source_pages == '' then out.next_payload = redis.call('GET', payload_key_of(prefix, id)) end
  out.next_waited_us, out.next_queue_wait_us = waits_us(key)
  return out
end

-- The call record: finalized, the job handed to this worker and its
-- attempt, the wake-ups it answered (`model lane` pairs, comma-separated),
-- and the jobs it cancelled before they started (finish.lua); one string.
local function replay(record)
  local r = {string.match(record, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|?(.*)$')}
  -- The first answer was lost: the cancellations it told were never counted.
  local out = {code = REPLY.OK, finalized = tonumber(r[1]), cancelled_unstarted = r[5] or ''}
  if r[2] and r[2] ~= '' then
    local prefix = group_prefix_of(r[2])
    local key = job_key_of(prefix, r[2])
    local c = redis.call('HMGET', key, F.status, F.attempts)
    if c[1] == STATUS.processing and c[2] == r[3] then
      with_claim(out, key, r[2], tonumber(c[2]), prefix)
    end
  end
  out.released = wake_ups_noted(r[4])
  return reply(out)
end

-- Takes the next due job of A.next_model for this worker; its id and attempt, or nil.
local function take_next(out, now)
  local also = {}
  for model in string.gmatch(A.next_interactive, '[^,]+') do also[#also + 1] = model end
  local id, prefix = take_ready(A.next_model, now, also)
  if not id then return nil end
  local key = job_key_of(prefix, id)
  local kind = redis.call('HGET', key, F.kind)
  local attempt = claim_job(key, id, kind, prefix, A.next_lease_ms, now, group_keys_of(id, kind))
  with_claim(out, key, id, attempt, prefix)
  return id, attempt
end

-- The job's hash, read once: the attempt's check and what its end needs.
local f = redis.call('HMGET', K.job, F.status, F.attempts, F.kind, F.parent_id, F.index, F.model,
  F.started_at, F.intervals, F.callback_url)
local refused = attempt_refused(f[1], f[2], A.attempt)
if refused then
  if refused == REPLY.WRONG_STATUS then
    local record = redis.call('GET', K.call)
    if record then return replay(record) end
  end
  return reply{code = refused}
end

local now = now_us()
local job = {id = A.job_id, kind = f[3], parent_id = f[4], index = f[5], model = f[6],
             intervals = intervals_after(f[2], f[7], f[8], now, A.status), callback_url = f[9]}
redis.call('ZREM', K.leases, A.job_id)
if A.status == STATUS.completed then
  redis.call('SET', K.result, A.result)
  -- The payload stays: a searchable PDF is drawn from the document and its result.
end
usage_attempt_ended(K.job, A.job_id, job.kind, job.model, f[7], now, A.usage_keep_s,
  A.status == STATUS.completed and A.units or nil)
finish_job(K.job, job, A.prefix, STATUS.processing, A.status, A.error_code, A.error, now)

local out = {code = REPLY.OK, finalized = 1}
if job.kind == KIND.child then
  out.finalized = child_finished(A.prefix, job.parent_id, STATUS.processing, A.status,
    A.release_limit, A.requeue_ms, now)
end
local handed_to, handed_attempt = '', ''
if A.next_lease_ms > 0 then
  handed_to, handed_attempt = take_next(out, now)
end
out.released = wake_ups(now, A.requeue_ms)
out.cancelled_unstarted = cancelled_unstarted()
redis.call('SET', K.call, table.concat({out.finalized, handed_to or '', handed_attempt or '',
  noted_wake_ups(out.released), out.cancelled_unstarted}, '|'), 'PX', A.record_ms)
return reply(out)
