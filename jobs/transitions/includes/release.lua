-- release_children: moves held children of the parent K.parent to `queued`,
-- lowest index first, while its in-flight count (queued + processing) is
-- below max_parallel (max_parallel <= 0: no cap) and its tenant's in-flight
-- count (every group of the tenant) is below A.tenant_max_inflight (<= 0:
-- no cap), at most `limit` of them.  The held children are the parent's
-- held set (scored by index), so a release reads only the children it
-- moves, wherever they are in the group (a redrive puts failed children
-- back among completed ones).
-- With A.tenant_quota = 1 (more than one bucket), the tenant's room in this
-- bucket is its quota here (granted by its ledger, jobs/tenant_quota.py),
-- kept below its ceiling while the sweep takes quota back, minus its
-- in-flight count here: the buckets' quotas never sum above the cap.
-- Reads K.parent, K.queued, K.due, A.tenant_max_inflight; derives the
-- tenant's keys from the parent's id, and the keys of the tenant's waiting
-- groups from their ids.
--
-- Because the counts and the moves happen in one script, any process may
-- call this at any time without ever exceeding either cap.  A parent left
-- with held children and a free slot of its own goes on the due index for
-- the sweep: now when `limit` cut the release short, or, when its tenant's
-- cap alone holds it back, in its tenant's waiting line, and on the due
-- index only after requeue_ms (a safety net, should the cap be lifted).
--
-- Fair share within a tenant: a tenant slot goes first to the tenant's
-- waiting line, longest waiting first; a group served there goes to the back
-- if it still waits.  So whatever release runs (the completion of a child,
-- a create, the sweep), the tenant's groups take turns for its slots, and a
-- large group cannot keep every slot its own completions free.
--
-- Returns a flat list {child_id, model, priority, child_id, model, priority,
-- ...} of the children released (of this parent, and of the groups served from the
-- line).  Each enters its model's ready index (ready.lua): the caller answers
-- the wake-ups that index needs (wake_ups), not one message per child.
-- @needs indexes
-- @needs ready

-- How many children this script's releases moved to `queued`, of any group (the sweep counts them).
local children_released = 0

-- lined: whether the tenant's waiting line may hold a group (it did when read,
-- or one joined it since); when not, no group needs taking out of it.
local function tenant_of(id)
  local tag = tenant_tag_of(id)
  return {cap = A.tenant_max_inflight, in_flight = tenant_in_flight_key_of(tag), waiting = tenant_waiting_key_of(tag),
          quota = A.tenant_quota == 1 and tenant_quota_key_of(tag) or nil, lined = true}
end

local function leave_line(tenant, parent_id)
  if tenant.lined then redis.call('ZREM', tenant.waiting, parent_id) end
end

-- How many more children the tenant may put in flight.
local function tenant_room(tenant)
  if tenant.cap <= 0 then return math.huge end
  local limit = tenant.cap
  if tenant.quota then
    local q = redis.call('HMGET', tenant.quota, 'quota', 'ceiling')
    limit = math.min(limit, tonumber(q[1] or '0'), tonumber(q[2] or limit))
  end
  return limit - tonumber(redis.call('GET', tenant.in_flight) or '0')
end

-- A group joins its tenant's line at the back, or keeps the place it has.
local function wait_in_line(tenant, parent_id, keep_place)
  tenant.lined = true
  local last = redis.call('ZRANGE', tenant.waiting, -1, -1, 'WITHSCORES')
  local turn = 1
  if last[2] then turn = tonumber(last[2]) + 1 end
  if keep_place then
    redis.call('ZADD', tenant.waiting, 'NX', turn, parent_id)
  else
    redis.call('ZADD', tenant.waiting, turn, parent_id)
  end
end

-- One group's release; appends what it released to `out`, returns how many.
local function release_group(parent_key, prefix, parent_id, tenant, limit, requeue_ms, now, out)
  local f = redis.call('HMGET', parent_key, F.max_parallel,
    count_field(STATUS.queued), count_field(STATUS.processing), F.status)
  if not f[1] or TERMINAL[f[4]] then
    redis.call('ZREM', K.due, parent_id)
    leave_line(tenant, parent_id)
    return 0
  end
  local cap, in_flight = tonumber(f[1]), tonumber(f[2]) + tonumber(f[3])
  local room = math.min(limit, tenant_room(tenant))
  if cap > 0 then room = math.min(room, cap - in_flight) end
  local held_key = children_key_of(prefix, STATUS.held)
  local released = 0
  if room > 0 then
    local held = redis.call('ZRANGE', held_key, 0, room - 1, 'WITHSCORES')
    local publish_by = ms_of(now) + requeue_ms
    for i = 1, #held, 2 do
      local id, index = held[i], held[i + 1]
      local key = job_key_of(prefix, id)
      redis.call('HSET', key, F.status, STATUS.queued, F.queued_at, int(now))
      move_child(prefix, id, index, STATUS.held, STATUS.queued)
      redis.call('ZADD', K.queued, publish_by, id)
      local routed = redis.call('HMGET', key, F.model, F.priority)
      make_ready(id, routed[1], lane_of(routed[2]), now)
      out[#out + 1] = id
      out[#out + 1] = routed[1]
      out[#out + 1] = lane_of(routed[2])
    end
    released = #held / 2
    children_released = children_released + released
    if released > 0 then
      redis.call('HINCRBY', parent_key, count_field(STATUS.held), -released)
      redis.call('HINCRBY', parent_key, count_field(STATUS.queued), released)
    end
    in_flight = in_flight + released
  end
  if (cap <= 0 or in_flight < cap) and redis.call('ZCARD', held_key) > 0 then
    if tenant_room(tenant) <= 0 then
      -- Served just now, it goes to the back; passed over, it keeps its place.
      wait_in_line(tenant, parent_id, released == 0)
      redis.call('ZADD', K.due, ms_of(now) + requeue_ms, parent_id)
    else
      leave_line(tenant, parent_id)
      redis.call('ZADD', K.due, ms_of(now), parent_id)
    end
  else
    leave_line(tenant, parent_id)
    redis.call('ZREM', K.due, parent_id)
  end
  return released
end

local function release_children(prefix, parent_id, limit, requeue_ms, now)
  local tenant = tenant_of(parent_id)
  local out = {}
  local served_self = false
  -- Each turn either ends the loop (no room, or `limit` reached) or takes
  -- the head out of the line (it no longer waits for its tenant), so the
  -- line's length bounds it.
  local turns = redis.call('ZCARD', tenant.waiting)
  tenant.lined = turns > 0
  while turns > 0 and #out / 3 < limit and tenant_room(tenant) > 0 do
    turns = turns - 1
    local head = redis.call('ZRANGE', tenant.waiting, 0, 0)[1]
    if not head then break end
    if head == parent_id then
      served_self = true
      release_group(K.parent, prefix, parent_id, tenant, limit - #out / 3, requeue_ms, now, out)
    else
      local other = group_prefix_of(head)
      release_group(job_key_of(other, head), other, head, tenant, limit - #out / 3, requeue_ms, now, out)
    end
  end
  if not served_self then
    release_group(K.parent, prefix, parent_id, tenant, limit - #out / 3, requeue_ms, now, out)
  end
  -- `limit` cut the turns short (e.g. a cancel freed many slots at once):
  -- the sweep goes on with the line, from its head.
  if #out / 3 >= limit and tenant_room(tenant) > 0 then
    local head = redis.call('ZRANGE', tenant.waiting, 0, 0)[1]
    if head then redis.call('ZADD', K.due, ms_of(now), head) end
  end
  return out
end
