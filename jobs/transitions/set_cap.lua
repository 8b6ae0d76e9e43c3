--[[
  set_cap: changes a running group's max_parallel.  A higher cap releases
  held children into the new slots at once; a lower one takes effect as
  running children finish (no running child is stopped), since every
  release compares the in-flight count with the cap of the moment.

  Keys:
    RELEASE_KEYS   (spec.py) parent: the parent's hash
  Derived from A.prefix: the children's keys and per-status sets; from the
  ids, the tenant's keys and its waiting groups (release.lua).

  Args:
    parent_id
    max_parallel   the new cap (<= 0: no cap)
    RELEASE_ARGS   (spec.py)

  Reply:
    {OK, released...}  the wake-ups the children released into new slots need (ready.lua)
    {NO_JOB}           no such parent (a single job or a child has no cap)
    {WRONG_STATUS, status}  the parent is terminal: nothing written
]]
-- @include release

local f = redis.call('HMGET', K.parent, F.kind, F.status)
if f[1] ~= KIND.parent then return reply{code = REPLY.NO_JOB} end
if TERMINAL[f[2]] then return reply{code = REPLY.WRONG_STATUS, status = f[2]} end
redis.call('HSET', K.parent, F.max_parallel, int(A.max_parallel))
local now = now_us()
release_children(A.prefix, A.parent_id, A.release_limit, A.requeue_ms, now)
return reply{code = REPLY.OK, released = wake_ups(now, A.requeue_ms)}
