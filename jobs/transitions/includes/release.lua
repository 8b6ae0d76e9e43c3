-- release_children: moves held children of the parent K.parent to `queued`,
-- lowest index first, while its in-flight count (queued + processing) is
-- below max_parallel (max_parallel <= 0: no cap), at most `limit` of them.
-- The held children are the parent's held set (scored by index), so a
-- release reads only the children it moves, wherever they are in the group
-- (a redrive puts failed children back among completed ones).
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
  local f = redis.call('HMGET', K.parent, F.max_parallel,
    count_field(STATUS.queued), count_field(STATUS.processing), F.status)
  local out = {}
  if not f[1] or TERMINAL[f[4]] then
    redis.call('ZREM', K.due, parent_id)
    return out
  end
  local cap, in_flight = tonumber(f[1]), tonumber(f[2]) + tonumber(f[3])
  local room = limit
  if cap > 0 then room = math.min(limit, cap - in_flight) end
  local held_key = children_key_of(prefix, STATUS.held)
  if room > 0 then
    local held = redis.call('ZRANGE', held_key, 0, room - 1, 'WITHSCORES')
    local publish_by = ms_of(now) + requeue_ms
    for i = 1, #held, 2 do
      local id, index = held[i], held[i + 1]
      local key = job_key_of(prefix, id)
      redis.call('HSET', key, F.status, STATUS.queued, F.queued_at, int(now))
      move_child(prefix, id, index, STATUS.held, STATUS.queued)
      redis.call('ZADD', K.queued, publish_by, id)
      out[#out + 1] = id
      out[#out + 1] = redis.call('HGET', key, F.model)
    end
    local released = #out / 2
    if released > 0 then
      redis.call('HINCRBY', K.parent, count_field(STATUS.held), -released)
      redis.call('HINCRBY', K.parent, count_field(STATUS.queued), released)
    end
    in_flight = in_flight + released
  end
  if (cap <= 0 or in_flight < cap) and redis.call('ZCARD', held_key) > 0 then
    redis.call('ZADD', K.due, ms_of(now), parent_id)
  else
    redis.call('ZREM', K.due, parent_id)
  end
  return out
end
