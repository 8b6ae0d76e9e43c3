--[[
  quota_fence: a reconcile's read of the tenant's quota in a bucket
  (jobs/tenant_quota.py): fences the bucket with the reconcile's epoch (a
  grant of an earlier one is refused from now on) and answers its quota.

  Keys:
    quota          the tenant's quota in the bucket

  Args:
    epoch          the reconcile's (ledger_open)

  Reply:
    {OK, quota}
]]
-- @include common

if tonumber(redis.call('HGET', K.quota, 'fence') or '0') < A.epoch then
  redis.call('HSET', K.quota, 'fence', int(A.epoch))
end
return reply{code = REPLY.OK, quota = tonumber(redis.call('HGET', K.quota, 'quota') or '0')}
