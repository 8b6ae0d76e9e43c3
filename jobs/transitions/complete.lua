--[[
  complete: the attempt holding a job ends it, successfully or not:
  `processing` -> `completed` | `failed` | `cancelled` (the attempt stopped
  because a client cancelled the job), finished_at, the job's one audit
  event; for a child, its slot goes to the next held children of its parent
  and, if it was the parent's last unfinished child, the parent is finalized
  in the same step (status, finished_at, the parent's audit event).

  A worker may take the child released into the slot itself (A.next_lease_ms
  > 0): the first released child of its model (A.next_model) is claimed for
  it in this same step, as `claim` would, and needs no Celery message.  The
  slot thus passes from one child to the next with no broker round trip and
  no gap; both caps (the group's, its tenant's) hold because the child is
  released before it is claimed.  A slot is kept only for a child of the
  same group, and only while no other work waits for a worker (the queued
  index holds nothing but this group's queued children): otherwise the child
  goes through a message, behind what was queued before it, so another
  group's or another tenant's queued work waits for the jobs queued ahead
  of it, never for a run of kept slots.  So a waiting interactive job always
  makes a batch group's kept slot give way (and, its lane's queue consumed
  first, runs before the batch child).  An interactive group's slot gives
  way alike: its child goes to the interactive queue, which is consumed
  first, so it loses only the round trip through the broker.

  Keys:
    job            the job's hash
    result         its result (its document stays, beside them)
    events         the audit stream of the job's root
    leases         the global index of leases
    webhooks       the index of terminal jobs whose callback is due
    call           the record of this call (its token), kept A.record_ms
    RELEASE_KEYS   (spec.py) parent: its parent's key (the job's own for a single job)
    ROOT_KEYS      (spec.py) the listing's sets of the root's kind
  Derived from A.prefix: the group's other jobs (released and kept
  children) and their payloads, the per-status children sets; from the
  ids, the tenant's keys and the groups its release served (release.lua).

  Args:
    job_id
    attempt        the token from claim
    status         'completed' | 'failed' | 'cancelled'
    result         JSON, or ''
    error_code     why it failed ('' if it did not)
    error          its message
    next_lease_ms  the lease of the child claimed for this worker (0: claim
                   nothing, publish every released child)
    next_model     the model of the child to claim
    record_ms      how long the record of this call is kept
    RELEASE_ARGS   (spec.py)

  Reply:
    {OK, finalized, next_job_id, next_attempt, next_try_number, next_model,
        next_content_type, next_options, next_payload, next_waited_us,
        next_source_pages, next_queue_wait_us, next_traceparent, cancelled_unstarted, released...}
        done; next_* is the child claimed for this worker, as claim answers
        it (next_job_id false when none; a split's child answers its
        source_pages, not a payload); cancelled_unstarted the held children
        a fail-fast group cancelled (finish.lua; a replay answers them
        again, the first answer having been lost); released are the other
        children released into the freed slot, each needing a Celery message
    {NO_JOB}
    {WRONG_STATUS}  not processing: a late or duplicate attempt, nothing written
    {LEASE_LOST}    another attempt holds the job (this one lost its lease): nothing written
    The same call sent again (same token: its reply was lost to a dropped
    connection and the client retried) answers as the first time did, from
    its call record: the children it released that are still queued (their
    messages were never sent) and the child it claimed, if that attempt
    still holds it.  Nothing is written.
]]
-- @include attempt
-- @include claim
-- @include finish

local function with_claim(out, key, id, attempt)
  local c = redis.call('HMGET', key, F.model, F.content_type, F.options, F.attempts_base, F.source_pages,
    F.traceparent)
  out.next_job_id, out.next_attempt, out.next_model = id, attempt, c[1]
  out.next_try_number = attempt - (tonumber(c[4]) or 0)
  out.next_content_type, out.next_options = c[2], c[3]
  out.next_source_pages = c[5] or ''
  out.next_traceparent = c[6] or ''
  -- A split's child reads its pages of the parent's document itself (the worker keeps the last one).
  if out.next_source_pages == '' then out.next_payload = redis.call('GET', payload_key_of(A.prefix, id)) end
  out.next_waited_us, out.next_queue_wait_us = waits_us(key)
  return out
end

-- Work other than this group's waits for a worker: another group's
-- children or a single job, of any tenant, queued (its message out).
local function others_waiting()
  local own = tonumber(redis.call('HGET', K.parent, count_field(STATUS.queued)) or '0')
  return redis.call('ZCARD', K.queued) > own
end

-- The call record: finalized, the child handed to this worker and its
-- attempt, the ids released for publishing (comma-separated), and the jobs
-- it cancelled before they started (finish.lua); one string.
local function replay(record)
  local r = {string.match(record, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|?(.*)$')}
  -- The first answer was lost: the cancellations it told were never counted.
  local out = {code = REPLY.OK, finalized = tonumber(r[1]), released = {}, cancelled_unstarted = r[5] or ''}
  if r[2] and r[2] ~= '' then
    local key = job_key_of(A.prefix, r[2])
    local c = redis.call('HMGET', key, F.status, F.attempts)
    if c[1] == STATUS.processing and c[2] == r[3] then
      with_claim(out, key, r[2], tonumber(c[2]))
    end
  end
  for id in string.gmatch(r[4] or '', '[^,]+') do
    -- A release may have served another group of the tenant (its waiting line).
    local c = redis.call('HMGET', job_key_of(group_prefix_of(id), id), F.status, F.model, F.priority)
    if c[1] == STATUS.queued then
      out.released[#out.released + 1] = id
      out.released[#out.released + 1] = c[2]
      out.released[#out.released + 1] = lane_of(c[3])
    end
  end
  return reply(out)
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
finish_job(K.job, job, A.prefix, STATUS.processing, A.status, A.error_code, A.error, now)

local out = {code = REPLY.OK, finalized = 1, released = {}}
local handed_to, handed_attempt = '', ''
if job.kind == KIND.child then
  local finalized, released = child_finished(A.prefix, job.parent_id, STATUS.processing, A.status,
    A.release_limit, A.requeue_ms, now)
  out.finalized = finalized
  local taken = nil
  if A.next_lease_ms > 0 and not others_waiting() then
    for i = 1, #released, 3 do
      if released[i + 1] == A.next_model and root_of(released[i]) == job.parent_id then taken = i break end
    end
  end
  if taken then
    local next_id = released[taken]
    local next_key = job_key_of(A.prefix, next_id)
    local next_attempt = claim_job(next_key, next_id, KIND.child, A.prefix, A.next_lease_ms, now)
    with_claim(out, next_key, next_id, next_attempt)
    handed_to, handed_attempt = next_id, next_attempt
  end
  for i = 1, #released, 3 do
    if i ~= taken then
      out.released[#out.released + 1] = released[i]
      out.released[#out.released + 1] = released[i + 1]
      out.released[#out.released + 1] = released[i + 2]
    end
  end
end
local published = {}
for i = 1, #out.released, 3 do published[#published + 1] = out.released[i] end
out.cancelled_unstarted = cancelled_unstarted()
redis.call('SET', K.call, table.concat({out.finalized, handed_to, handed_attempt, table.concat(published, ','),
  out.cancelled_unstarted}, '|'), 'PX', A.record_ms)
return reply(out)
