-- back_to_queued: ends the attempt and puts its job back to `queued`, to be
-- published again once `delay_ms` has passed (the sweep re-publishes what
-- waits in K.queued); it keeps its slot, so the cap holds.  It enters its
-- model's ready index too, due at `ready_at` (µs), for a worker that takes
-- its next job from there.  Used by `retry` (a transient error) and
-- `reclaim` (a lease ran out).  Reads K.leases, K.queued, K.parent,
-- K.roots_<status>, A.usage_keep_s (the attempt's seconds, usage.lua).
-- @needs attempt
-- @needs move_job
-- @needs ready
-- @needs usage

local function back_to_queued(job_key, job_id, prefix, stage, error_code, error_msg, delay_ms, now, ready_at)
  local f = redis.call('HMGET', job_key, F.kind, F.index, F.model, F.priority)
  end_attempt(job_key, now, stage)
  usage_attempt_ended(job_key, job_id, f[1], f[3], nil, now, A.usage_keep_s)
  redis.call('HSET', job_key, F.status, STATUS.queued, F.queued_at, int(now), F.stage, stage,
    F.last_error_code, error_code, F.last_error, error_msg)
  redis.call('ZREM', K.leases, job_id)
  redis.call('ZADD', K.queued, ms_of(now) + delay_ms, job_id)
  move_job(prefix, job_key, job_id, f[1], f[2], STATUS.processing, STATUS.queued)
  if ready_at > now then
    make_later(job_id, ready_at)
  else
    make_ready(job_id, f[3], lane_of(f[4]), now)
  end
  -- Neither retry nor reclaim answers wake-ups, which save the turns moved otherwise.
  save_turns()
end
