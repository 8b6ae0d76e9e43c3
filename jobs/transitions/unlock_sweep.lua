--[[
  unlock_sweep: frees the sweep lock if this tick still holds it, so a tick
  that overran its lock cannot free the lock of the tick that followed it.

  Keys:
    lock           the sweep lock

  Args:
    token          the holder's, set with SET NX PX

  Reply: {OK} freed, {NOTHING} held by another tick (or expired)
]]

if redis.call('GET', K.lock) == A.token then
  redis.call('DEL', K.lock)
  return reply{code = REPLY.OK}
end
return reply{code = REPLY.NOTHING}
