--[[
  redrive: sends the failed children of a terminal parent again (and its
  cancelled ones, when asked), under the same cap.  Each goes back to `held`
  with max_attempts tries again (its attempts count on, so a token of an
  earlier attempt stays stale; its earlier runs stay in its intervals); the
  parent goes back to `processing` and will finalize again, with a new audit
  event; completed children and their results are untouched.  The parent's
  searchable PDF goes, every variant of it (its pages will change), and so
  do the marks of builds asked for, so the next request asks again once it
  has ended.  With an
  Idempotency-Key, a repeat of the same redrive answers as the first did.

  The Idempotency-Key's own record is in the key's bucket, taken first by
  reserve_key.lua (so that one key holds across buckets); the mark written
  here, in the group's bucket, says that this redrive ran.

  Keys:
    idempotency    the redrive's mark (keys.redrive_mark; the parent's key
                   when there is no Idempotency-Key)
    RELEASE_KEYS   (spec.py) parent: the parent's hash
    ROOT_KEYS      (spec.py) the listing's sets of parents, and the expiring
                   index of ended roots waiting for deletion (it leaves it)
  Derived from A.prefix: the children's keys and per-status sets, the
  parent's searchable PDFs and their builds' marks; from the
  ids, the tenant's keys and its waiting groups (release.lua).

  Args:
    parent_id
    include_cancelled  1: send the cancelled children again too
    idempotency_key    '' for none
    fingerprint        the request's, to tell a retried request from a key reused
    idempotency_ttl    how long the record is kept
    RELEASE_ARGS   (spec.py)

  Reply:
    {OK, redriven, released...}  how many children were sent again; the
        wake-ups the first released need (ready.lua)
    {REPLAYED}    the same key and request: answered as the first time, nothing written
    {KEY_REUSED}  the key was used for a different request: nothing written
    {NO_JOB}      no such parent
    {WRONG_STATUS, status}  the parent is not terminal
    {NOTHING}     no child to send again
]]
-- @include release

if A.idempotency_key ~= '' then
  local existing = redis.call('HMGET', K.idempotency, F.id, 'fingerprint')
  if existing[1] then
    if existing[2] == A.fingerprint then return reply{code = REPLY.REPLAYED} end
    return reply{code = REPLY.KEY_REUSED}
  end
end
local p = redis.call('HMGET', K.parent, F.kind, F.status)
if p[1] ~= KIND.parent then return reply{code = REPLY.NO_JOB} end
if not TERMINAL[p[2]] then return reply{code = REPLY.WRONG_STATUS, status = p[2]} end

local from = {STATUS.failed}
if A.include_cancelled == 1 then from[2] = STATUS.cancelled end
local redriven = 0
for _, status in ipairs(from) do
  local found = redis.call('ZRANGE', children_key_of(A.prefix, status), 0, -1, 'WITHSCORES')
  for i = 1, #found, 2 do
    local child_key = job_key_of(A.prefix, found[i])
    local attempts = redis.call('HGET', child_key, F.attempts) or '0'
    redis.call('HSET', child_key,
      F.status, STATUS.held, F.attempts_base, attempts, F.stage, STAGE.accepted, F.progress, '0',
      F.started_at, '', F.finished_at, '', F.error_code, '', F.error, '',
      F.last_error_code, '', F.last_error, '', F.cancel_requested, '')
    move_child(A.prefix, found[i], found[i + 1], status, STATUS.held)
  end
  local n = #found / 2
  if n > 0 then
    redis.call('HINCRBY', K.parent, count_field(status), -n)
    redis.call('HINCRBY', K.parent, count_field(STATUS.held), n)
  end
  redriven = redriven + n
end
if redriven == 0 then return reply{code = REPLY.NOTHING} end

local now = now_us()
redis.call('HSET', K.parent, F.status, STATUS.processing, F.stage, STATUS.processing, F.finished_at, '',
  F.error_code, '', F.cancel_requested, '')
redis.call('HINCRBY', K.parent, F.redrives, 1)
move_root(K.parent, A.parent_id, p[2], STATUS.processing)
-- Running again: kept until it ends again, whatever the retention of its first ending.
redis.call('ZREM', K.expiring, A.parent_id)
redis.call('UNLINK', pdf_key_of(A.prefix, A.parent_id), unpack(pdf_asked_keys_of(A.prefix, A.parent_id)))
if A.idempotency_key ~= '' then
  redis.call('HSET', K.idempotency, F.id, A.parent_id, 'fingerprint', A.fingerprint)
  redis.call('EXPIRE', K.idempotency, A.idempotency_ttl)
end
release_children(A.prefix, A.parent_id, A.release_limit, A.requeue_ms, now)
return reply{code = REPLY.OK, redriven = redriven, released = wake_ups(now, A.requeue_ms)}
