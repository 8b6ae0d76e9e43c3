--[[
  ledger_forget: takes a tenant out of those the sweep rebalances
  (jobs/tenant_quota.py) once it has nothing anywhere, unless a creation
  touched it since the sweep read it (each touch adds 1 to its score).

  Keys:
    registry       the tenants with a ledger (keys.LEDGERS)

  Args:
    tag            the tenant's tag
    touched        its score when the sweep read it

  Reply:
    {OK}       taken out
    {NOTHING}  touched since: kept
]]

if tonumber(redis.call('ZSCORE', K.registry, A.tag) or '-1') ~= A.touched then return reply{code = REPLY.NOTHING} end
redis.call('ZREM', K.registry, A.tag)
return reply{code = REPLY.OK}
