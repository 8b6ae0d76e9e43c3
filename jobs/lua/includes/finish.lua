-- finish_job: the terminal step of one job (status, finished_at, error, and
-- its one audit event).  finalize_parent_if_done: the terminal step of a
-- parent, taken exactly once, by whichever transition finishes its last
-- child.  child_finished: moves a finished child's count on its parent,
-- hands its slot to the next held child, and finalizes the parent if due.

local function audit(events_key, operation, job_id, parent_id, status, model, error_code, now)
  redis.call('XADD', events_key, '*',
    'operation', operation,
    'job_id', job_id,
    'parent_job_id', parent_id or '',
    'status', status,
    'model', model or '',
    'error_code', error_code or '',
    'time', int(now))
end

local function finish_job(job_key, events_key, job_id, kind, parent_id, model, status, error_code, error_msg, now)
  redis.call('HSET', job_key,
    'status', status,
    'finished_at', int(now),
    'stage', status,
    'error_code', error_code,
    'error', error_msg)
  if status == 'completed' then
    redis.call('HSET', job_key, 'progress', '1')
  end
  local operation = 'job'
  if kind == 'child' then operation = 'job_child' end
  audit(events_key, operation, job_id, parent_id, status, model, error_code, now)
end

local function finalize_parent_if_done(parent_key, parent_id, events_key, active_index, due_index, now)
  local f = redis.call('HMGET', parent_key,
    'status', 'total', 'n_completed', 'n_failed', 'n_cancelled', 'model')
  if TERMINAL[f[1]] then return 0 end
  local total = tonumber(f[2])
  local completed, failed, cancelled = tonumber(f[3]), tonumber(f[4]), tonumber(f[5])
  if completed + failed + cancelled < total then return 0 end
  local status, error_code = 'completed', ''
  if failed > 0 then
    status, error_code = 'failed', 'child_failed'
  end
  redis.call('HSET', parent_key,
    'status', status, 'finished_at', int(now), 'stage', status, 'error_code', error_code)
  audit(events_key, 'job', parent_id, '', status, f[6], error_code, now)
  redis.call('ZREM', active_index, parent_id)
  redis.call('ZREM', due_index, parent_id)
  return 1
end

-- Returns finalized (0/1) and the list of released children.
local function child_finished(parent_key, prefix, parent_id, from_status, to_status,
                              events_key, queued_index, active_index, due_index, limit, requeue_ms, now)
  redis.call('HINCRBY', parent_key, 'n_' .. from_status, -1)
  redis.call('HINCRBY', parent_key, 'n_' .. to_status, 1)
  local released = release_children(parent_key, prefix, parent_id, queued_index, due_index, limit, requeue_ms, now)
  local finalized = finalize_parent_if_done(parent_key, parent_id, events_key, active_index, due_index, now)
  return finalized, released
end
