-- claim_job: the step that starts an attempt: `queued` -> `processing`,
-- attempts + 1, started_at, a lease; for a child, its parent's counts and
-- indexes move and the parent starts with its first child.  Used by `claim`
-- (a worker taking a job from its Celery message) and by `complete` (a
-- worker taking the child it just released into its own slot, with no
-- message at all).  Reads K.leases, K.queued, K.parent, K.roots_<status>.
-- @needs move_job
--
-- Returns the new attempt number: the token of this attempt.

local function claim_job(job_key, job_id, kind, prefix, lease_ms, now)
  -- What the claim and its answer read (the job taken in a completion was read only for its release).
  read_fields(job_key, {F.attempts, F.index, F.attempts_base, F.content_type, F.options, F.created_at, F.queued_at})
  if kind == KIND.child then read_fields(K.parent, {count_field(STATUS.queued), count_field(STATUS.processing),
    F.started_at, F.status}) end
  local attempt = add_to_field(job_key, F.attempts, 1)
  set_fields(job_key, F.status, STATUS.processing, F.started_at, int(now), F.stage, STAGE.started, F.progress, '0')
  redis.call('ZADD', K.leases, ms_of(now) + lease_ms, job_id)
  -- Released in this same step, it is on no queued index yet (move_child takes it back).
  if not released_now(job_id) then redis.call('ZREM', K.queued, job_id) end
  move_job(prefix, job_key, job_id, kind, field_of(job_key, F.index), STATUS.queued, STATUS.processing)
  if kind == KIND.child and field_of(K.parent, F.started_at) == ''
      and field_of(K.parent, F.status) == STATUS.queued then
    set_fields(K.parent, F.started_at, int(now), F.status, STATUS.processing, F.stage, STATUS.processing)
    move_root(K.parent, field_of(K.parent, F.id), STATUS.queued, STATUS.processing)
  end
  return attempt
end

-- waited_us: how long a child released into a freed slot (after its group's
-- creation) waited from that release to its start, in µs; -1 for a job
-- released at its creation.  Claims answer it, so that a worker records its
-- hand-off latency without reading the job again.
local function waited_us(job_key)
  local created = tonumber(field_of(job_key, F.created_at))
  local queued, started = tonumber(field_of(job_key, F.queued_at)), tonumber(field_of(job_key, F.started_at))
  if not (created and queued and started) or queued == created then return -1 end
  return math.max(0, started - queued)
end
