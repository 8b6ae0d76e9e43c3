--[[
  expire: deletes an ended root whose retention is over, with every key of
  its group, and takes it out of every index in the same step, so that no
  listing, due index or webhook index ever names a job that is gone.  The
  transition that ended the root put it on the expiring index, scored by
  when it ended (finish.lua); a redrive takes it off again, and its next
  ending puts it back with the new time.

  What goes: the root's hash, document, result, searchable PDFs (and the
  marks of builds asked for) and audit stream (its children's events and
  webhook attempts included); for a parent, each child's hash, document,
  result and searchable PDF, found through the parent's per-status
  children sets, and those sets.  Not indexed, so not deleted here: the
  records of calls (they lapse on their own within CALL_RECORD_MS, which
  OCRGW_RESULT_TTL is never below) and the Idempotency-Key record (it lapses
  OCRGW_IDEMPOTENCY_TTL after the create, never later than its job).

  Keys:
    root           the single job's or the parent's hash
    events         the root's audit stream
    due            the bucket's index of due parents
    webhooks       the bucket's index of due webhooks (a child with a
                   callback_url is on it by its own id)
    ROOT_KEYS      (spec.py) the listing's sets of the root's kind, and the
                   expiring index: ended roots, scored by when they ended (ms)
  Derived from A.prefix: each job's hash, document, result and searchable
  PDF, the children's per-status sets.

  Args:
    root_id
    prefix         the group's hash-tagged prefix
    ttl_ms         the retention, OCRGW_RESULT_TTL
    owed_ms        how long after a job ended its webhook may still be owed
                   (the retry window and one claim: Settings.webhook_owed_ms)

  Reply:
    {OK, jobs}  deleted: the root and its children, `jobs` of them
    {NOTHING}   not on the index, or not due yet (it ended again later); a
                root that runs again (redriven) or is gone leaves the index;
                a root whose webhook, or a child's, is still owed is kept
                and comes due again when that webhook is
]]
-- @include common

local function leave_indexes(id)
  redis.call('ZREM', K.due, id)
  redis.call('ZREM', K.webhooks, id)
  for _, status in pairs(STATUS) do
    local listing = K['roots_' .. status]
    if listing then redis.call('ZREM', listing, id) end
  end
  redis.call('ZREM', K.expiring, id)
end

local ended = redis.call('ZSCORE', K.expiring, A.root_id)
if not ended then return reply{code = REPLY.NOTHING} end
local f = redis.call('HMGET', K.root, F.status, F.kind, F.finished_at)
if not f[1] then
  leave_indexes(A.root_id)
  return reply{code = REPLY.NOTHING}
end
if not TERMINAL[f[1]] then
  redis.call('ZREM', K.expiring, A.root_id)
  return reply{code = REPLY.NOTHING}
end
local now_ms = tonumber(ms_of(now_us()))
if tonumber(ended) + A.ttl_ms > now_ms then return reply{code = REPLY.NOTHING} end

-- A webhook still owed (due, or claimed by an attempt whose answer is not
-- recorded yet, its deliverer dead perhaps) keeps the root, or deleting it
-- would lose the webhook.  The root comes due again once the last of them is
-- due, and not within the second.  A webhook ends delivered or given up
-- (OCRGW_WEBHOOK_GIVE_UP_AFTER) when an attempt is recorded; past that
-- window and one claim (A.owed_ms) no attempt is coming (no deliverer runs),
-- and the root goes with its webhooks rather than being kept for ever.
-- From when it really ended: a kept root's place on the expiring index moves on.
local owed = nil
local watched = tonumber(ms_of(f[3])) + A.owed_ms > now_ms
if watched then owed = tonumber(redis.call('ZSCORE', K.webhooks, A.root_id)) end
if watched and f[2] == KIND.parent then
  for status in pairs(TERMINAL) do
    for _, id in ipairs(redis.call('ZRANGE', children_key_of(A.prefix, status), 0, -1)) do
      local due = tonumber(redis.call('ZSCORE', K.webhooks, id))
      if due and (not owed or due > owed) then owed = due end
    end
  end
end
if owed then
  redis.call('ZADD', K.expiring, math.max(owed, now_ms + 1000) - A.ttl_ms, A.root_id)
  return reply{code = REPLY.NOTHING}
end

-- UNLINK: a document may be large; Redis frees it in the background.
local function delete_job(id)
  redis.call('UNLINK', job_key_of(A.prefix, id), payload_key_of(A.prefix, id), result_key_of(A.prefix, id),
    pdf_key_of(A.prefix, id), unpack(pdf_asked_keys_of(A.prefix, id)))
  redis.call('ZREM', K.webhooks, id)
end

local jobs = 1
if f[2] == KIND.parent then
  for _, status in pairs(STATUS) do
    local children = children_key_of(A.prefix, status)
    local ids = redis.call('ZRANGE', children, 0, -1)
    for _, id in ipairs(ids) do delete_job(id) end
    jobs = jobs + #ids
    redis.call('UNLINK', children)
  end
end
delete_job(A.root_id)
redis.call('UNLINK', K.events)
leave_indexes(A.root_id)
return reply{code = REPLY.OK, jobs = jobs}
