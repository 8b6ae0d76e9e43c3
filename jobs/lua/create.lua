--[[
  create: a single job (`queued`), or a parent with all its children (`held`)
  and the release of its first children, together with the idempotency
  record.  All or nothing: the script checks everything it needs before its
  first write.

  Input:
    KEYS[1]  idempotency record key (unused when ARGV[1] == '0')
    KEYS[2]  root job key (the single job, or the parent)
    KEYS[3]  queued index
    KEYS[4]  active parents index
    KEYS[5]  due parents index
    KEYS[6..] payload keys: the single job's, or one per child in index order
    (children's job keys are KEYS[6 + n ..]: one per child, in index order)

    ARGV[1]  '1' when the request carries an Idempotency-Key
    ARGV[2]  request fingerprint (sha256 of the request)
    ARGV[3]  idempotency retention, seconds
    ARGV[4]  root id
    ARGV[5]  kind: 'single' | 'parent'
    ARGV[6]  release limit (held children released by this call, at most)
    ARGV[7]  requeue delay, ms (when the sweep re-publishes an unclaimed job)
    ARGV[8]  the Idempotency-Key as sent ('' when none)
    ARGV[9]  group prefix (see jobs/keys.py), for the keys of released children
    single:  ARGV[10..14] model, doc_hash, pages, content_type, options (JSON)
    parent:  ARGV[10] max_parallel, ARGV[11] child count n, ARGV[12] parent model,
             then per child i (0-based) five fields starting at 13 + 5*i:
             model, doc_hash, pages, content_type, options (JSON)
    payloads, after all the above: one per payload key, in the same order

  Output:
    {1, id, child_id, model, ...}  created; followed by the jobs now queued,
                                   each needs a Celery message
    {2, existing_id}               idempotent replay: same key, same request (or
                                   a retried call of this very create)
    {-1, existing_id}              same key, different request: nothing written
]]
-- @include common
-- @include release

local idem_key, root_key = KEYS[1], KEYS[2]
local queued_index, active_index, due_index = KEYS[3], KEYS[4], KEYS[5]
local has_idem, fingerprint, idem_ttl = ARGV[1] == '1', ARGV[2], ARGV[3]
local root_id, kind = ARGV[4], ARGV[5]
local release_limit, requeue_ms = tonumber(ARGV[6]), tonumber(ARGV[7])
local idempotency_key, prefix = ARGV[8], ARGV[9]

if has_idem then
  local existing = redis.call('HMGET', idem_key, 'id', 'fingerprint')
  if existing[1] then
    if existing[2] == fingerprint then return {2, existing[1]} end
    return {-1, existing[1]}
  end
end

-- A client-side retry of a create that did run (its reply was lost) finds
-- the root already there: answer as a replay rather than write it again.
if redis.call('EXISTS', root_key) == 1 then return {2, root_id} end

local now = now_us()
local common_fields = {
  'id', root_id, 'kind', kind, 'created_at', int(now),
  'stage', 'accepted', 'progress', '0', 'attempts', '0',
  'started_at', '', 'finished_at', '', 'error_code', '', 'error', '',
  'idempotency_key', idempotency_key,
}

local out = {1, root_id}
if kind == 'single' then
  local model = ARGV[10]
  local payload_at = 15
  redis.call('HSET', root_key, unpack(common_fields))
  redis.call('HSET', root_key,
    'status', 'queued', 'queued_at', int(now), 'model', model, 'doc_hash', ARGV[11],
    'pages', ARGV[12], 'content_type', ARGV[13], 'options', ARGV[14])
  redis.call('SET', KEYS[6], ARGV[payload_at])
  redis.call('ZADD', queued_index, ms_of(now) + requeue_ms, root_id)
  out[#out + 1] = root_id
  out[#out + 1] = model
else
  local max_parallel, n, parent_model = ARGV[10], tonumber(ARGV[11]), ARGV[12]
  local fields_at, payload_at = 13, 13 + 5 * n
  redis.call('HSET', root_key, unpack(common_fields))
  redis.call('HSET', root_key,
    'status', 'queued', 'model', parent_model, 'max_parallel', max_parallel,
    'total', int(n), 'next_release', '0',
    'n_held', int(n), 'n_queued', '0', 'n_processing', '0',
    'n_completed', '0', 'n_failed', '0', 'n_cancelled', '0')
  for i = 0, n - 1 do
    local at = fields_at + 5 * i
    local child_key = KEYS[6 + n + i]
    local child_idem = ''
    if idempotency_key ~= '' then child_idem = idempotency_key .. '#' .. int(i) end
    common_fields[2] = child_id_of(root_id, i)
    common_fields[4] = 'child'
    common_fields[#common_fields] = child_idem
    redis.call('HSET', child_key, unpack(common_fields))
    redis.call('HSET', child_key,
      'status', 'held', 'parent_id', root_id, 'index', int(i),
      'model', ARGV[at], 'doc_hash', ARGV[at + 1], 'pages', ARGV[at + 2],
      'content_type', ARGV[at + 3], 'options', ARGV[at + 4])
    redis.call('SET', KEYS[6 + i], ARGV[payload_at + i])
  end
  redis.call('ZADD', active_index, ms_of(now), root_id)
  local released = release_children(root_key, prefix, root_id, queued_index, due_index,
    release_limit, requeue_ms, now)
  for _, v in ipairs(released) do out[#out + 1] = v end
end

if has_idem then
  redis.call('HSET', idem_key, 'id', root_id, 'fingerprint', fingerprint)
  redis.call('EXPIRE', idem_key, idem_ttl)
end
return out
