--[[
  set_cap: changes a running group's max_parallel.  A higher cap releases
  held children into the new slots at once; a lower one takes effect as
  running children finish (no running child is stopped), since every
  release compares the in-flight count with the cap of the moment.

  Keys (spec: controls.py): parent, queued, due
  Derived from A.prefix: the children's keys and per-status sets; from the
  ids, the tenant's keys and its waiting groups (release.lua).
  Args: parent_id, prefix, max_parallel (<= 0: no cap), release_limit, requeue_ms,
    tenant_max_inflight (<= 0: no cap)

  Reply:
    {OK, released...}  the children released into new slots, each needing a Celery message
    {NO_JOB}           no such parent (a single job or a child has no cap)
    {WRONG_STATUS, status}  the parent is terminal: nothing written
]]
-- @include release

local f = redis.call('HMGET', K.parent, F.kind, F.status)
if f[1] ~= KIND.parent then return reply{code = REPLY.NO_JOB} end
if TERMINAL[f[2]] then return reply{code = REPLY.WRONG_STATUS, status = f[2]} end
redis.call('HSET', K.parent, F.max_parallel, int(A.max_parallel))
local released = release_children(A.prefix, A.parent_id, A.release_limit, A.requeue_ms, now_us())
return reply{code = REPLY.OK, released = released}
