-- The indexes a status change moves a job between: a child between its
-- parent's per-status sets (derived from the group prefix), a root between
-- the listing's per-status sets.  Reads K.roots_<status>: a script that
-- moves roots declares all of them.
--
-- A child's move also keeps its tenant's in-flight count (queued +
-- processing children across all the tenant's groups; its key derived from
-- the child's id): every status change of a child goes through move_child,
-- so the count cannot drift from the children sets.
-- @needs common

local IN_FLIGHT = {[STATUS.queued] = 1, [STATUS.processing] = 1}

local function move_child(prefix, child_id, index, from, to)
  redis.call('ZREM', children_key_of(prefix, from), child_id)
  redis.call('ZADD', children_key_of(prefix, to), index, child_id)
  local change = (IN_FLIGHT[to] or 0) - (IN_FLIGHT[from] or 0)
  if change ~= 0 then
    local in_flight = tenant_in_flight_key_of(tenant_tag_of(child_id))
    -- At zero the count goes: a tenant with nothing in flight leaves no key behind.
    if redis.call('INCRBY', in_flight, change) == 0 then redis.call('DEL', in_flight) end
  end
end

-- ks: the keys of the root's group (K unless given: see group_keys_of).
local function move_root(root_key, root_id, from, to, ks)
  ks = ks or K
  local created = redis.call('HGET', root_key, F.created_at)
  redis.call('ZREM', ks['roots_' .. from], root_id)
  redis.call('ZADD', ks['roots_' .. to], created, root_id)
end

-- The keys a claim of `id` moves, as K names them for a script's own job:
-- its root (`parent`) and its tenant's listing sets of the root's kind, for
-- a job a script takes from the ready index, of whatever group.
local function group_keys_of(id, kind)
  local root_kind = KIND.single
  if kind == KIND.child then root_kind = KIND.parent end
  local tag = tenant_tag_of(id)
  return {parent = job_key_of(group_prefix_of(id), root_of(id)),
          ['roots_' .. STATUS.queued] = roots_key_of(tag, root_kind, STATUS.queued),
          ['roots_' .. STATUS.processing] = roots_key_of(tag, root_kind, STATUS.processing)}
end
