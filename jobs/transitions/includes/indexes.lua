-- The indexes a status change moves a job between: a child between its
-- parent's per-status sets (derived from the group prefix), a root between
-- the listing's per-status sets.  Reads K.roots_<status>: a script that
-- moves roots declares all of them.
-- @needs common

local function move_child(prefix, child_id, index, from, to)
  redis.call('ZREM', children_key_of(prefix, from), child_id)
  redis.call('ZADD', children_key_of(prefix, to), index, child_id)
end

local function move_root(root_key, root_id, from, to)
  local created = redis.call('HGET', root_key, F.created_at)
  redis.call('ZREM', K['roots_' .. from], root_id)
  redis.call('ZADD', K['roots_' .. to], created, root_id)
end
