--[[
  release: hands free slots of one parent to its next held children, and
  finalizes the parent if every child is terminal.  Creation and completion
  already release in their own scripts; the sweep calls this for parents on
  the due index (a release that a batch limit cut short).

  Input:
    KEYS[1]  parent key
    KEYS[2]  events stream of the parent
    KEYS[3]  queued index
    KEYS[4]  active parents index
    KEYS[5]  due parents index
    ARGV[1]  parent id
    ARGV[2]  release limit
    ARGV[3]  requeue delay, ms
    ARGV[4]  group prefix

  Output:
    {parent_finalized, child_id, model, ...}  the children released (each
        needs a Celery message); {0} for an unknown parent
]]
-- @include common
-- @include release
-- @include finish

local parent_key, events_key, queued_index, active_index, due_index = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local parent_id, release_limit, requeue_ms, prefix = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]

if redis.call('HGET', parent_key, 'kind') ~= 'parent' then
  redis.call('ZREM', due_index, parent_id)
  return {0}
end
local now = now_us()
local released = release_children(parent_key, prefix, parent_id, queued_index, due_index,
  release_limit, requeue_ms, now)
local out = {finalize_parent_if_done(parent_key, parent_id, events_key, active_index, due_index, now)}
for _, v in ipairs(released) do out[#out + 1] = v end
return out
