--[[
  release: hands free slots of one parent to its next held children, and
  finalizes the parent if every child is terminal.  Creation and completion
  already release in their own scripts; the sweep calls this for parents on
  the due index (a release that a batch limit cut short, or, once
  requeue_ms has passed, a parent its tenant's cap held back: in case the
  cap was lifted meanwhile, since only the tenant's own releases serve its
  waiting line).

  Keys:
    events         the parent's audit stream
    webhooks       the index of terminal jobs whose callback is due
    RELEASE_KEYS   (spec.py) parent: the parent's hash
    ROOT_KEYS      (spec.py) the listing's sets of parents
  Derived from A.prefix: the children's keys and per-status sets; from the
  ids, the tenant's keys and its waiting groups (release.lua), which are
  served first.

  Args:
    parent_id
    RELEASE_ARGS   (spec.py)

  Reply:
    {OK, finalized, children, released...}  children: how many it released
                                  (of this parent, and of the groups
                                  served from its tenant's line); then
                                  the wake-ups they need (ready.lua)
    {NOTHING}                     not a parent (it leaves the due index)
]]
-- @include finish

if redis.call('HGET', K.parent, F.kind) ~= KIND.parent then
  redis.call('ZREM', K.due, A.parent_id)
  return reply{code = REPLY.NOTHING}
end
local now = now_us()
release_children(A.prefix, A.parent_id, A.release_limit, A.requeue_ms, now)
return reply{code = REPLY.OK, finalized = finalize_parent_if_done(A.parent_id, now),
             children = children_released, released = wake_ups(now, A.requeue_ms)}
