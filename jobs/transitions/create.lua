--[[
  create: a single job (`queued`), or a parent with all its children (`held`)
  and the release of its first children, together with the idempotency
  record.  All or nothing: the script checks everything it needs before its
  first write.

  Keys:
    idempotency    the idempotency record (the root's key again when there is none)
    root           the single job's or the parent's key
    roots_queued   the listing's set of queued roots of this kind, the tenant's
    RELEASE_KEYS   (spec.py) parent: the root's key again
  Derived from A.prefix, the group's hash-tagged prefix: each job's key and
  payload key, and the children's per-status sets; from the models, their
  ready indexes and wake-ups (ready.lua).

  Args:
    idempotency_key  '' for none
    fingerprint    the request's, to tell a retried request from a key reused
    idempotency_ttl  how long the record is kept
    root_id
    kind           'single' | 'parent'
    tenant         whose job it is, kept on the root only (a child is its
                   root's tenant's): the tenant's name
    key_id         the submitting key's id, kept on the root only
    weight         the tenant's weight in the lanes' turns (its keys'), recorded in the
                   bucket for the releases of its jobs (ready.lua)
    traceparent    the creating request's W3C traceparent, kept on every job
                   of the call; '' (tracing off) stores no field
    RELEASE_ARGS   (spec.py) release_limit 0 leaves every child held and the
                   parent on the due index, for the sweep
    group          JSON, the parent's rules by their field names (F.<name>; {} for a
                   single job): model ('mixed' when its children's differ),
                   max_parallel, tolerated_failures, fail_fast, callback_url, priority
                   (the lane of the group and of every child, whatever the child says)
    jobs           JSON: one object per job (the single job, or each child in index
                   order), its fields by their names (F.<name>): model, doc_hash,
                   pages, content_type, options (JSON), callback_url, on_prem,
                   source_pages ('' or "first-last": the child's pages of the
                   parent's document, a split PDF), priority (a single job's lane;
                   a lane is stored only when interactive: no field is the default)
    source         parent: the document its children's source_pages are pages of,
                   stored once as the parent's payload ('' for none)
    payloads       the rest of ARGV: one document per job, in the same order
                   ('' for a child with source_pages: it stores none)

  Reply:
    {OK, job_id, released...}  created; released are the wake-ups the
                               jobs now queued need (ready.lua)
    {REPLAYED, job_id}         same key and request, or a retried call
                               of this very create: the existing job
    {KEY_REUSED, job_id}       same key, different request: nothing written
]]
-- @include release

local existing_id = nil
if A.idempotency_key ~= '' then
  local existing = redis.call('HMGET', K.idempotency, F.id, 'fingerprint')
  if existing[1] then
    if existing[2] == A.fingerprint then return reply{code = REPLY.REPLAYED, job_id = existing[1]} end
    return reply{code = REPLY.KEY_REUSED, job_id = existing[1]}
  end
end

-- A client-side retry of a create that did run (its reply was lost) finds
-- the root already there: answer as a replay rather than write it again.
if redis.call('EXISTS', K.root) == 1 then return reply{code = REPLY.REPLAYED, job_id = A.root_id} end

local now = now_us()
local function has_source_pages(spec)
  return spec[F.source_pages] ~= nil and spec[F.source_pages] ~= ''
end
record_weight(tenant_tag_of(A.root_id), A.weight)
-- A job's fields (`spec`, by their names), in `lane`, and `more` after them: each job's hash is one HSET.
local function job_fields(id, kind, idempotency_key, spec, lane, more)
  local fields = {
    F.id, id, F.kind, kind, F.created_at, int(now),
    F.stage, STAGE.accepted, F.progress, '0', F.attempts, '0',
    F.started_at, '', F.finished_at, '', F.error_code, '', F.error, '',
    F.idempotency_key, idempotency_key,
    F.model, spec[F.model], F.doc_hash, spec[F.doc_hash], F.pages, spec[F.pages],
    F.content_type, spec[F.content_type], F.options, spec[F.options],
    F.callback_url, spec[F.callback_url], F.on_prem, spec[F.on_prem],
  }
  -- Only a split's child has its pages of a source: other hashes stay as they were.
  if has_source_pages(spec) then
    fields[#fields + 1] = F.source_pages
    fields[#fields + 1] = spec[F.source_pages]
  end
  -- Only an interactive job says so: no field is the default lane (lane_of), which spares every batch
  -- child its bytes.
  if lane == PRIORITY.interactive then
    fields[#fields + 1] = F.priority
    fields[#fields + 1] = PRIORITY.interactive
  end
  -- Only with tracing on: a job created without it has no field, and no bytes spent on one.
  if A.traceparent ~= '' then
    fields[#fields + 1] = F.traceparent
    fields[#fields + 1] = A.traceparent
  end
  for _, v in ipairs(more) do fields[#fields + 1] = v end
  return fields
end

if A.kind == KIND.single then
  local spec = A.jobs[1]
  local lane = lane_of(spec[F.priority])
  redis.call('HSET', K.root, unpack(job_fields(A.root_id, KIND.single, A.idempotency_key, spec, lane,
    {F.status, STATUS.queued, F.queued_at, int(now), F.tenant, A.tenant, F.key_id, A.key_id})))
  redis.call('SET', payload_key_of(A.prefix, A.root_id), ARGV[A.payloads_from])
  redis.call('ZADD', K.queued, ms_of(now) + A.requeue_ms, A.root_id)
  make_ready(A.root_id, spec[F.model], lane, now)
else
  local n = #A.jobs
  -- The group's lane is every child's: the one place a child's own is overruled.
  local lane = lane_of(A.group[F.priority])
  redis.call('HSET', K.root,
    F.id, A.root_id, F.kind, KIND.parent, F.created_at, int(now),
    F.stage, STAGE.accepted, F.progress, '0', F.attempts, '0',
    F.started_at, '', F.finished_at, '', F.error_code, '', F.error, '',
    F.idempotency_key, A.idempotency_key,
    F.status, STATUS.queued, F.model, A.group[F.model], F.max_parallel, int(A.group[F.max_parallel]),
    F.total, int(n), F.tolerated_failures, int(A.group[F.tolerated_failures]),
    F.fail_fast, A.group[F.fail_fast] and '1' or '0', F.callback_url, A.group[F.callback_url], F.redrives, '0',
    F.tenant, A.tenant, F.key_id, A.key_id)
  if A.traceparent ~= '' then redis.call('HSET', K.root, F.traceparent, A.traceparent) end
  if lane == PRIORITY.interactive then redis.call('HSET', K.root, F.priority, PRIORITY.interactive) end
  -- A split's document, once for all its children: they read their pages of it.
  if A.source ~= '' then redis.call('SET', payload_key_of(A.prefix, A.root_id), A.source) end
  local counts = {}
  for _, status in pairs(STATUS) do
    counts[#counts + 1] = count_field(status)
    counts[#counts + 1] = status == STATUS.held and int(n) or '0'
  end
  redis.call('HSET', K.root, unpack(counts))
  local held = {}
  for i = 0, n - 1 do
    local id = child_id_of(A.root_id, i)
    local child_idem = ''
    if A.idempotency_key ~= '' then child_idem = A.idempotency_key .. '#' .. int(i) end
    local key = job_key_of(A.prefix, id)
    local spec = A.jobs[i + 1]
    redis.call('HSET', key, unpack(job_fields(id, KIND.child, child_idem, spec, lane,
      {F.status, STATUS.held, F.parent_id, A.root_id, F.index, int(i)})))
    if not has_source_pages(spec) then redis.call('SET', payload_key_of(A.prefix, id), ARGV[A.payloads_from + i]) end
    held[#held + 1] = i
    held[#held + 1] = id
  end
  zadd_all(children_key_of(A.prefix, STATUS.held), held)
  release_children(A.prefix, A.root_id, A.release_limit, A.requeue_ms, now)
end
redis.call('ZADD', K.roots_queued, int(now), A.root_id)

if A.idempotency_key ~= '' then
  redis.call('HSET', K.idempotency, F.id, A.root_id, 'fingerprint', A.fingerprint)
  redis.call('EXPIRE', K.idempotency, A.idempotency_ttl)
end
return reply{code = REPLY.OK, job_id = A.root_id, released = wake_ups(now, A.requeue_ms)}
