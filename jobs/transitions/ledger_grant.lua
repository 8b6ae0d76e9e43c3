--[[
  ledger_grant: the first step of a grant of the tenant's quota to a bucket
  (jobs/tenant_quota.py): adds up to A.k to the bucket's grant in the
  tenant's ledger, as much as keeps the sum of the ledger's grants within
  the cap.  The second step (quota_grant) adds what this granted to the
  bucket's quota, unless a reconcile fenced the bucket with a later epoch
  meanwhile: a grant lost between the two steps leaves the ledger above the
  buckets (the safe way), until a reconcile.

  Keys:
    ledger         the tenant's ledger (its own slot)

  Args:
    field          the bucket's field in the ledger (b<i>)
    k              how much the bucket asks for
    cap            the tenant's cap (OCRGW_TENANT_MAX_INFLIGHT)

  Reply:
    {OK, granted, epoch}  granted: 0 to k; epoch: the ledger's, which the bucket's step carries
]]

local all = redis.call('HGETALL', K.ledger)
local sum, epoch = 0, 0
for i = 1, #all, 2 do
  if string.sub(all[i], 1, 1) == 'b' then sum = sum + tonumber(all[i + 1]) end
  if all[i] == 'epoch' then epoch = tonumber(all[i + 1]) end
end
local granted = math.max(0, math.min(A.k, A.cap - sum))
if granted > 0 then
  redis.call('HINCRBY', K.ledger, A.field, granted)
  redis.call('HINCRBY', K.ledger, 'seq', 1)
end
return reply{code = REPLY.OK, granted = granted, epoch = epoch}
