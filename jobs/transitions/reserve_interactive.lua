--[[
  reserve_interactive: before a creation in the interactive lane
  (jobs/interactive_share.py), takes the places its root needs in its
  tenant's interactive allowance, in the tenant's own slot, so that the
  allowance holds across every bucket.  The places stay with the root until
  the gateway finds it ended (or gone) and gives them back; nothing here
  reads a job, whose keys are in other slots.

  Keys:
    reservations   the tenant's interactive roots: root id -> "<places>|<reserved at, ms>"

  Args:
    root_id
    places         how many jobs the root may have queued or processing at once
    limit          how many the tenant may hold (the submitting key's interactive_max_inflight)

  Reply:
    {OK, in_use, holders, now_ms}       reserved; in_use the places held now, its own included
    {NOTHING, in_use, holders, now_ms}  no room: nothing written; holders the roots
                                that hold places (comma-separated), for the caller
                                to check which have ended; now_ms the Redis time
]]
-- @include common

local held = redis.call('HGETALL', K.reservations)
local in_use, holders = 0, {}
for i = 1, #held, 2 do
  -- A root reserving again (a retried creation) replaces its own places.
  if held[i] ~= A.root_id then
    in_use = in_use + tonumber(string.match(held[i + 1], '^(%d+)'))
    holders[#holders + 1] = held[i]
  end
end
local now_ms = ms_of(now_us())
if in_use + A.places > A.limit then
  return reply{code = REPLY.NOTHING, in_use = in_use, holders = table.concat(holders, ','), now_ms = now_ms}
end
redis.call('HSET', K.reservations, A.root_id, int(A.places) .. '|' .. now_ms)
return reply{code = REPLY.OK, in_use = in_use + A.places, holders = table.concat(holders, ','), now_ms = now_ms}
