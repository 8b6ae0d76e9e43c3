-- The end of jobs.  Reads K.events, K.parent (the root), K.due, K.webhooks,
-- K.roots_<status> (and, through release_children, K.queued).
--
-- finish_job: the terminal step of one job (status, finished_at, error, its
--   one audit event, its indexes, its webhook if it has a callback_url).
-- cancel_children: ends every child of the parent in one status (held, or
--   queued) as cancelled at once.
-- finalize_parent_if_done: the terminal step of a parent, taken exactly
--   once per run (a redrive starts another), by whichever transition
--   finishes its last child: cancelled if a client cancelled it, failed if
--   more children failed or were cancelled than it tolerates, else completed.
-- child_finished: moves a finished child's count on its parent, cancels the
--   held children of a fail-fast parent past its tolerance, hands the slot
--   to the next held child, and finalizes the parent if due.
-- expire_later: a root that ends (a single job, or a parent at its
--   finalization) enters K.expiring, scored by when it ended; the sweep's
--   `expire` deletes it with every key of its group OCRGW_RESULT_TTL later.
-- cancelled_unstarted: the jobs this script ended `cancelled` before they
--   started (held or queued), by model, as `model:n,...`: a reply's
--   `cancelled_unstarted`, which the process that ran the script counts as
--   finished (no worker ever sees them end).
-- @needs release
-- @needs attempt

-- Whose the job is comes from its root (K.parent: a child's parent, else the
-- job itself), the one hash that keeps it: the tenant and the submitting
-- key's id, never the key.
local function audit(operation, job_id, parent_id, status, model, error_code, now)
  local owner = redis.call('HMGET', K.parent, F.tenant, F.key_id)
  redis.call('XADD', K.events, '*',
    E.operation, operation,
    E.job_id, job_id,
    E.parent_job_id, parent_id or '',
    E.status, status,
    E.model, model or '',
    E.error_code, error_code or '',
    E.time, int(now),
    E.tenant, owner[1] or '',
    E.key_id, owner[2] or '')
end

local unstarted_cancelled = {}  -- model -> jobs this script cancelled before they started

local function cancelled_unstarted()
  local parts = {}
  for model, n in pairs(unstarted_cancelled) do parts[#parts + 1] = model .. ':' .. n end
  table.sort(parts)
  return table.concat(parts, ',')
end

local function expire_later(root_id, now)
  redis.call('ZADD', K.expiring, ms_of(now), root_id)
end

-- url: the job's callback_url when already read (nil: read it here).
local function notify_if_asked(job_key, job_id, now, url)
  if url == nil then url = redis.call('HGET', job_key, F.callback_url) end
  if url and url ~= '' then
    redis.call('ZADD', K.webhooks, ms_of(now), job_id)
    if redis.call('HEXISTS', job_key, F.webhook_attempts) == 1 then
      -- It ended before (a redrive): a delivery of that ending still in
      -- flight must not count for this one, so its attempt number goes stale.
      local base = redis.call('HINCRBY', job_key, F.webhook_attempts, 1)
      redis.call('HSET', job_key, F.webhook_attempts_base, base)
    end
  end
end

-- `job` holds the job's id, kind, parent_id, index and model, and may hold
-- what its caller already has: intervals (their new value, written in the
-- same HSET) and callback_url (false when it has none).
local function finish_job(job_key, job, prefix, from, status, error_code, error_msg, now)
  local fields = {F.status, status, F.finished_at, int(now), F.stage, status, F.error_code, error_code,
    F.error, error_msg}
  if status == STATUS.completed then
    fields[#fields + 1] = F.progress
    fields[#fields + 1] = '1'
  end
  if job.intervals then
    fields[#fields + 1] = F.intervals
    fields[#fields + 1] = job.intervals
  end
  redis.call('HSET', job_key, unpack(fields))
  if status == STATUS.cancelled and (from == STATUS.held or from == STATUS.queued) then
    local model = job.model or ''
    unstarted_cancelled[model] = (unstarted_cancelled[model] or 0) + 1
  end
  if job.kind == KIND.child then
    move_child(prefix, job.id, job.index, from, status)
    audit(OPERATION.job_child, job.id, job.parent_id, status, job.model, error_code, now)
  else
    move_root(job_key, job.id, from, status)
    audit(OPERATION.job, job.id, '', status, job.model, error_code, now)
    expire_later(job.id, now)
  end
  notify_if_asked(job_key, job.id, now, job.callback_url)
end

-- Returns how many children it cancelled; the parent's counts follow.
local function cancel_children(prefix, parent_id, from, why, now)
  local found = redis.call('ZRANGE', children_key_of(prefix, from), 0, -1, 'WITHSCORES')
  for i = 1, #found, 2 do
    local id = found[i]
    local key = job_key_of(prefix, id)
    local routed = redis.call('HMGET', key, F.model, F.priority)
    local job = {id = id, kind = KIND.child, parent_id = parent_id, index = found[i + 1], model = routed[1]}
    if from == STATUS.queued then
      redis.call('ZREM', K.queued, id)
      leave_ready_cancelled(id, routed[1], lane_of(routed[2]))
    end
    finish_job(key, job, prefix, from, STATUS.cancelled, '', why, now)
  end
  local n = #found / 2
  if n > 0 then
    redis.call('HINCRBY', K.parent, count_field(from), -n)
    redis.call('HINCRBY', K.parent, count_field(STATUS.cancelled), n)
  end
  return n
end

local function beyond_tolerance(p_failed, p_cancelled, tolerated)
  return tonumber(p_failed) + tonumber(p_cancelled) > tonumber(tolerated or '0')
end

local function finalize_parent_if_done(parent_id, now)
  local f = redis.call('HMGET', K.parent, F.status, F.total, count_field(STATUS.completed),
    count_field(STATUS.failed), count_field(STATUS.cancelled), F.model, F.cancel_requested, F.tolerated_failures)
  if TERMINAL[f[1]] then return 0 end
  local total = tonumber(f[2])
  local completed, failed, cancelled = tonumber(f[3]), tonumber(f[4]), tonumber(f[5])
  if completed + failed + cancelled < total then return 0 end
  local status, error_code = STATUS.completed, ''
  if f[7] == '1' then
    status = STATUS.cancelled
  elseif beyond_tolerance(failed, cancelled, f[8]) then
    status, error_code = STATUS.failed, ERROR.child_failed
    if failed == 0 then error_code = ERROR.child_cancelled end
  end
  redis.call('HSET', K.parent,
    F.status, status, F.finished_at, int(now), F.stage, status, F.error_code, error_code)
  move_root(K.parent, parent_id, f[1], status)
  audit(OPERATION.job, parent_id, '', status, f[6], error_code, now)
  expire_later(parent_id, now)
  notify_if_asked(K.parent, parent_id, now)
  redis.call('ZREM', K.due, parent_id)
  return 1
end

-- Returns finalized (0/1) and the list of released children.
local function child_finished(prefix, parent_id, from_status, to_status, limit, requeue_ms, now)
  redis.call('HINCRBY', K.parent, count_field(from_status), -1)
  redis.call('HINCRBY', K.parent, count_field(to_status), 1)
  if to_status == STATUS.failed or to_status == STATUS.cancelled then
    local p = redis.call('HMGET', K.parent, F.fail_fast, F.cancel_requested, count_field(STATUS.failed),
      count_field(STATUS.cancelled), F.tolerated_failures)
    if p[1] == '1' and p[2] ~= '1' and beyond_tolerance(p[3], p[4], p[5]) then
      cancel_children(prefix, parent_id, STATUS.held, 'cancelled: the group failed past its tolerance', now)
    end
  end
  local released = release_children(prefix, parent_id, limit, requeue_ms, now)
  local finalized = finalize_parent_if_done(parent_id, now)
  return finalized, released
end
