-- claim_job: the step that starts an attempt: `queued` -> `processing`,
-- attempts + 1, started_at, a lease; for a child, its parent's counts move
-- and the parent starts with its first child.  Used by `claim` (a worker
-- taking a job from its Celery message) and by `complete` (a worker taking
-- the child it just released into its own slot, with no message at all).
--
-- Returns the new attempt number: the token of this attempt.

local function claim_job(job_key, job_id, kind, parent_key, leases, queued_index, lease_ms, now)
  local attempt = redis.call('HINCRBY', job_key, 'attempts', 1)
  redis.call('HSET', job_key,
    'status', 'processing', 'started_at', int(now), 'stage', 'started', 'progress', '0')
  redis.call('ZADD', leases, ms_of(now) + lease_ms, job_id)
  redis.call('ZREM', queued_index, job_id)
  if kind == 'child' then
    redis.call('HINCRBY', parent_key, 'n_queued', -1)
    redis.call('HINCRBY', parent_key, 'n_processing', 1)
    local p = redis.call('HMGET', parent_key, 'started_at', 'status')
    if p[1] == '' and not TERMINAL[p[2]] then
      redis.call('HSET', parent_key, 'started_at', int(now), 'status', 'processing', 'stage', 'processing')
    end
  end
  return attempt
end
