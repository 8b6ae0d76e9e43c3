--[[
  complete: the attempt holding a job ends it, successfully or not:
  `processing` -> `completed` | `failed`, finished_at, the job's one audit
  event; for a child, its slot goes to the next held children of its parent
  and, if it was the parent's last unfinished child, the parent is finalized
  in the same step (status, finished_at, the parent's audit event).

  A worker may take the child released into the slot itself (ARGV[10] > 0):
  the first released child of its model (ARGV[11]) is claimed for it in
  this same step, as `claim` would, and needs no Celery message.  The slot
  thus passes from one child to the next with no broker round trip and no
  gap; the cap holds because the child is released before it is claimed.

  Input:
    KEYS[1]  job key
    KEYS[2]  result key
    KEYS[3]  payload key
    KEYS[4]  events stream of the job's root
    KEYS[5]  leases index
    KEYS[6]  queued index
    KEYS[7]  active parents index
    KEYS[8]  due parents index
    KEYS[9]  parent key (the job key again for a job without a parent)
    KEYS[10] call record of this call (its token), kept ARGV[12] ms
    ARGV[1]  job id
    ARGV[2]  attempt (from claim)
    ARGV[3]  'completed' | 'failed'
    ARGV[4]  result JSON (completed) or ''
    ARGV[5]  error_code ('' when completed)
    ARGV[6]  error message
    ARGV[7]  release limit
    ARGV[8]  requeue delay, ms
    ARGV[9]  group prefix
    ARGV[10] lease of the next child, ms; 0: claim nothing, publish every released child
    ARGV[11] model of the next child the worker may take ('' when ARGV[10] is 0)
    ARGV[12] how long the call record is kept, ms

  Output:
    {1, parent_finalized, 0, child_id, model, ...}  done; followed by the
        children released into the freed slot (each needs a Celery message)
    {1, parent_finalized, 1, next_id, attempt, model, content_type, options, payload,
        child_id, model, ...}  done, and the next child claimed for this
        worker (as claim answers it); then the other released children
    {-1}            no such job
    {-2, status}    not processing: a late or duplicate attempt, nothing written
    The same call sent again (same token: its reply was lost to a dropped
    connection and the client retried) answers as the first time did, from
    its call record: the children it released that are still queued (their
    messages were never sent) and the child it claimed, if that attempt
    still holds it.  Nothing is written.
    {-3, attempts}  another attempt holds the job (this one lost its lease): nothing written
]]
-- @include common
-- @include claim
-- @include release
-- @include finish

local job_key, result_key, payload_key, events_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local leases, queued_index, active_index, due_index, parent_key = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local job_id, attempt, status = ARGV[1], ARGV[2], ARGV[3]
local result, error_code, error_msg = ARGV[4], ARGV[5], ARGV[6]
local release_limit, requeue_ms, prefix = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9]
local call_key = KEYS[10]
local next_lease_ms, next_model, record_ms = tonumber(ARGV[10]), ARGV[11], tonumber(ARGV[12])

local function claim_reply(out, key, id, attempt_, model)
  local c = redis.call('HMGET', key, 'content_type', 'options')
  for _, v in ipairs({id, attempt_, model, c[1], c[2], redis.call('GET', payload_key_of(prefix, id))}) do
    out[#out + 1] = v
  end
end

local function replay(r)
  local out = {1, tonumber(r[1]), 0}
  if r[2] and r[2] ~= '' then
    local key = job_key_of(prefix, r[2])
    local c = redis.call('HMGET', key, 'status', 'attempts', 'model')
    if c[1] == 'processing' and c[2] == r[3] then
      out[3] = 1
      claim_reply(out, key, r[2], tonumber(c[2]), c[3])
    end
  end
  for id in string.gmatch(r[4] or '', '[^,]+') do
    local c = redis.call('HMGET', job_key_of(prefix, id), 'status', 'model')
    if c[1] == 'queued' then
      out[#out + 1] = id
      out[#out + 1] = c[2]
    end
  end
  return out
end

local f = redis.call('HMGET', job_key, 'status', 'attempts', 'kind', 'parent_id', 'model')
if not f[1] then return {-1} end
if f[1] ~= 'processing' then
  local r = redis.call('HMGET', call_key, 'finalized', 'handed_to', 'handed_attempt', 'released')
  if r[1] then return replay(r) end
  return {-2, f[1]}
end
if f[2] ~= attempt then return {-3, f[2]} end

local now = now_us()
redis.call('ZREM', leases, job_id)
if status == 'completed' then
  redis.call('SET', result_key, result)
  -- A completed job is never run again; a failed one keeps its payload for a redrive.
  redis.call('DEL', payload_key)
end
finish_job(job_key, events_key, job_id, f[3], f[4], f[5], status, error_code, error_msg, now)

local out = {1, 1, 0}
local handed_to, handed_attempt, published = '', '', {}
if f[3] == 'child' then
  local finalized, released = child_finished(parent_key, prefix, f[4], 'processing', status,
    events_key, queued_index, active_index, due_index, release_limit, requeue_ms, now)
  out[2] = finalized
  local taken = nil
  if next_lease_ms > 0 then
    for i = 1, #released, 2 do
      if released[i + 1] == next_model then taken = i break end
    end
  end
  if taken then
    local next_id = released[taken]
    local next_key = job_key_of(prefix, next_id)
    local next_attempt = claim_job(next_key, next_id, 'child', parent_key, leases, queued_index, next_lease_ms, now)
    out[3] = 1
    claim_reply(out, next_key, next_id, next_attempt, next_model)
    handed_to, handed_attempt = next_id, next_attempt
  end
  for i = 1, #released, 2 do
    if i ~= taken then
      out[#out + 1] = released[i]
      out[#out + 1] = released[i + 1]
      published[#published + 1] = released[i]
    end
  end
end
redis.call('HSET', call_key, 'finalized', out[2], 'handed_to', handed_to, 'handed_attempt', handed_attempt,
  'released', table.concat(published, ','))
redis.call('PEXPIRE', call_key, record_ms)
return out
