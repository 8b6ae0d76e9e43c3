--[[
  claim_next: a worker a wake-up brought (an `ocrgw.pull` message, published
  for a model's ready jobs, see ready.lua) takes the job of the earliest
  turn of that model, interactive lane first, tenants taking turns, of
  whatever group or single job: `queued` -> `processing` as `claim` does,
  with a lease.  The wake-up stops counting as on its way.  The worker then
  goes on from job to job through `complete`, with no more messages.

  Only the bucket of its keys is looked at: a wake-up names its bucket,
  whose ready index it was published for.

  Keys:
    leases         the bucket's index of leases
    queued         the bucket's index of queued jobs
    call           the record of this call (its token), kept A.record_ms
  Derived from the bucket's prefix (that of every key above) and the model:
  the bucket's ready indexes and wake-ups of the model (ready.lua); from
  the id taken, its group's keys (its hash, payload, parent, per-status
  children sets) and its tenant's listing sets of its root's kind.

  Args:
    model          the model whose work the worker takes
    lane           the lane of the wake-up that brought the worker ('' for none)
    lease_ms       how long the lease holds before a heartbeat must extend it
    record_ms      how long the record of this call is kept
    requeue_ms     how long a wake-up published now counts as on its way

  Reply:
    {OK, job_id, attempt, try_number, model, content_type, options, payload, waited_us, source_pages,
        queue_wait_us, traceparent, released...}
        claimed, as claim answers it (a split's child answers its
        source_pages, not a payload); released are the wake-ups the
        model's ready jobs left need (ready.lua)
    {NOTHING, released...}  no job of the model is due: nothing claimed
    The same call sent again (the same token: its reply was lost to a
    dropped connection and the client retried) answers with the same claim
    if that attempt still holds its job, else NOTHING, and the wake-ups the
    first answer held (counted, never sent); nothing is written.
]]
-- @include claim
-- @include ready

local function claimed(id, attempt, prefix, released)
  local key = job_key_of(prefix, id)
  local f = redis.call('HMGET', key, F.model, F.content_type, F.options, F.attempts_base, F.source_pages,
    F.traceparent)
  local source_pages = f[5] or ''
  local payload = false
  if source_pages == '' then payload = redis.call('GET', payload_key_of(prefix, id)) end
  local waited, queue_wait = waits_us(key)
  return reply{code = REPLY.OK, job_id = id, attempt = attempt, try_number = attempt - (tonumber(f[4]) or 0),
               model = f[1], content_type = f[2], options = f[3], payload = payload,
               waited_us = waited, source_pages = source_pages, queue_wait_us = queue_wait,
               traceparent = f[6] or '', released = released}
end

-- The call record: the job claimed ('' for none), its attempt, and the wake-ups answered.
local record = redis.call('GET', K.call)
if record then
  local id, attempt, note = string.match(record, '^([^|]*)|([^|]*)|(.*)$')
  local released = wake_ups_noted(note)
  if id ~= '' then
    local prefix = group_prefix_of(id)
    local c = redis.call('HMGET', job_key_of(prefix, id), F.status, F.attempts)
    if c[1] == STATUS.processing and c[2] == attempt then return claimed(id, tonumber(attempt), prefix, released) end
  end
  return reply{code = REPLY.NOTHING, released = released}
end

local now = now_us()
if A.lane ~= '' then
  -- This worker's wake-up stops counting; lapsed ones first go, so that it is not one of them it removes.
  local pending = wakeups_key_of(A.model, A.lane)
  redis.call('ZREMRANGEBYSCORE', pending, '-inf', ms_of(now))
  redis.call('ZPOPMIN', pending)
end
local id, prefix = take_ready(A.model, now)
if not id then
  local released = wake_ups(now, A.requeue_ms)
  redis.call('SET', K.call, '||' .. noted_wake_ups(released), 'PX', A.record_ms)
  return reply{code = REPLY.NOTHING, released = released}
end
local key = job_key_of(prefix, id)
local kind = redis.call('HGET', key, F.kind)
local attempt = claim_job(key, id, kind, prefix, A.lease_ms, now, group_keys_of(id, kind))
local released = wake_ups(now, A.requeue_ms)
redis.call('SET', K.call, id .. '|' .. attempt .. '|' .. noted_wake_ups(released), 'PX', A.record_ms)
return claimed(id, attempt, prefix, released)
