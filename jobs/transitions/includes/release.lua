-- release_children: moves held children of the parent K.parent to `queued`,
-- in index order, while its in-flight count (queued + processing) is below
-- max_parallel (max_parallel <= 0: no cap), at most `limit` of them.
-- Reads K.parent, K.queued, K.due.
--
-- Because the count and the moves happen in one script, any process may
-- call this at any time without ever exceeding the cap.  A parent left with
-- held children and a free slot (only when `limit` cut the release short)
-- goes on the due index for the sweep; otherwise it leaves it.
--
-- Returns a flat list {child_id, model, child_id, model, ...} of the
-- children released: the caller publishes one Celery message for each.
-- @needs indexes

local function release_children(prefix, parent_id, limit, requeue_ms, now)
  local f = redis.call('HMGET', K.parent, F.total, F.max_parallel, F.next_release,
    count_field(STATUS.queued), count_field(STATUS.processing), F.status)
  local out = {}
  if not f[1] or TERMINAL[f[6]] then
    redis.call('ZREM', K.due, parent_id)
    return out
  end
  local total, cap, next_index = tonumber(f[1]), tonumber(f[2]), tonumber(f[3])
  local in_flight = tonumber(f[4]) + tonumber(f[5])
  local released = 0
  local publish_by = ms_of(now) + requeue_ms
  local cursor = next_index
  while cursor < total and (cap <= 0 or in_flight < cap) and released < limit do
    local id = child_id_of(parent_id, cursor)
    local key = job_key_of(prefix, id)
    local c = redis.call('HMGET', key, F.status, F.model)
    if c[1] == STATUS.held then
      redis.call('HSET', key, F.status, STATUS.queued, F.queued_at, int(now))
      move_child(prefix, id, cursor, STATUS.held, STATUS.queued)
      redis.call('ZADD', K.queued, publish_by, id)
      out[#out + 1] = id
      out[#out + 1] = c[2]
      in_flight = in_flight + 1
      released = released + 1
    end
    cursor = cursor + 1
  end
  if cursor ~= next_index then
    redis.call('HSET', K.parent, F.next_release, int(cursor))
  end
  if released > 0 then
    redis.call('HINCRBY', K.parent, count_field(STATUS.held), -released)
    redis.call('HINCRBY', K.parent, count_field(STATUS.queued), released)
  end
  if cursor < total and (cap <= 0 or in_flight < cap) then
    redis.call('ZADD', K.due, ms_of(now), parent_id)
  else
    redis.call('ZREM', K.due, parent_id)
  end
  return out
end
