-- claim_job: the step that starts an attempt: `queued` -> `processing`,
-- attempts + 1, started_at, a lease; for a child, its parent's counts and
-- indexes move and the parent starts with its first child.  Used by `claim`
-- (a worker taking a job from its Celery message), `complete` (a finishing
-- worker taking the next ready job, with no message at all) and
-- `claim_next` (a worker a wake-up brought).  Reads K.leases, K.queued, and
-- ks.parent, ks.roots_<status> (ks: K unless given, see group_keys_of).
-- @needs move_job
--
-- Returns the new attempt number: the token of this attempt.

local function claim_job(job_key, job_id, kind, prefix, lease_ms, now, ks)
  ks = ks or K
  local attempt = redis.call('HINCRBY', job_key, F.attempts, 1)
  redis.call('HSET', job_key, F.status, STATUS.processing, F.started_at, int(now),
    F.stage, STAGE.started, F.progress, '0')
  redis.call('ZADD', K.leases, ms_of(now) + lease_ms, job_id)
  redis.call('ZREM', K.queued, job_id)
  move_job(prefix, job_key, job_id, kind, redis.call('HGET', job_key, F.index), STATUS.queued, STATUS.processing,
    ks)
  if kind == KIND.child then
    local p = redis.call('HMGET', ks.parent, F.started_at, F.status, F.id)
    if p[1] == '' and p[2] == STATUS.queued then
      redis.call('HSET', ks.parent, F.started_at, int(now), F.status, STATUS.processing, F.stage, STATUS.processing)
      move_root(ks.parent, p[3], STATUS.queued, STATUS.processing, ks)
    end
  end
  return attempt
end

-- waits_us: two waits of a job just started, in µs, from one read of its
-- times: how long a child released into a freed slot (after its group's
-- creation) waited from that release to its start (-1 for a job released at
-- its creation: its hand-off latency), and how long it waited from its
-- creation to this start (-1 if a time is missing; a child's includes its
-- wait for a slot of its group: its queue wait).  Claims answer both, so that
-- a worker records them without reading the job again.
local function waits_us(job_key)
  local t = redis.call('HMGET', job_key, F.created_at, F.queued_at, F.started_at)
  local created, queued, started = tonumber(t[1]), tonumber(t[2]), tonumber(t[3])
  local queue_wait = -1
  if created and started then queue_wait = math.max(0, started - created) end
  if not (created and queued and started) or queued == created then return -1, queue_wait end
  return math.max(0, started - queued), queue_wait
end
