-- The end of attempts and of jobs.  Reads K.events, K.parent, K.due,
-- K.roots_<status> (and, through release_children, K.queued).
--
-- finish_job: the terminal step of one job (status, finished_at, error, its
--   one audit event, its indexes).
-- finalize_parent_if_done: the terminal step of a parent, taken exactly
--   once, by whichever transition finishes its last child.
-- child_finished: moves a finished child's count on its parent, hands its
--   slot to the next held child, and finalizes the parent if due.
-- @needs release
-- @needs attempt

local function audit(operation, job_id, parent_id, status, model, error_code, now)
  redis.call('XADD', K.events, '*',
    E.operation, operation,
    E.job_id, job_id,
    E.parent_job_id, parent_id or '',
    E.status, status,
    E.model, model or '',
    E.error_code, error_code or '',
    E.time, int(now))
end

-- `job` holds the job's id, kind, parent_id, index and model.
local function finish_job(job_key, job, prefix, from, status, error_code, error_msg, now)
  redis.call('HSET', job_key,
    F.status, status, F.finished_at, int(now), F.stage, status, F.error_code, error_code, F.error, error_msg)
  if status == STATUS.completed then
    redis.call('HSET', job_key, F.progress, '1')
  end
  if job.kind == KIND.child then
    move_child(prefix, job.id, job.index, from, status)
    audit(OPERATION.job_child, job.id, job.parent_id, status, job.model, error_code, now)
  else
    move_root(job_key, job.id, from, status)
    audit(OPERATION.job, job.id, '', status, job.model, error_code, now)
  end
end

local function finalize_parent_if_done(parent_id, now)
  local f = redis.call('HMGET', K.parent, F.status, F.total, count_field(STATUS.completed),
    count_field(STATUS.failed), count_field(STATUS.cancelled), F.model)
  if TERMINAL[f[1]] then return 0 end
  local total = tonumber(f[2])
  local completed, failed, cancelled = tonumber(f[3]), tonumber(f[4]), tonumber(f[5])
  if completed + failed + cancelled < total then return 0 end
  local status, error_code = STATUS.completed, ''
  if failed > 0 then
    status, error_code = STATUS.failed, ERROR.child_failed
  end
  redis.call('HSET', K.parent,
    F.status, status, F.finished_at, int(now), F.stage, status, F.error_code, error_code)
  move_root(K.parent, parent_id, f[1], status)
  audit(OPERATION.job, parent_id, '', status, f[6], error_code, now)
  redis.call('ZREM', K.due, parent_id)
  return 1
end

-- Returns finalized (0/1) and the list of released children.
local function child_finished(prefix, parent_id, from_status, to_status, limit, requeue_ms, now)
  redis.call('HINCRBY', K.parent, count_field(from_status), -1)
  redis.call('HINCRBY', K.parent, count_field(to_status), 1)
  local released = release_children(prefix, parent_id, limit, requeue_ms, now)
  local finalized = finalize_parent_if_done(parent_id, now)
  return finalized, released
end
