-- move_job: a job's status change in the indexes, whatever its kind: a
-- child's count on its parent (K.parent) and its parent's per-status sets,
-- or a root's listing sets (K.roots_<status>).
-- @needs indexes

-- ks: the keys of the job's group (K unless given: see group_keys_of).
local function move_job(prefix, job_key, job_id, kind, index, from, to, ks)
  ks = ks or K
  if kind == KIND.child then
    redis.call('HINCRBY', ks.parent, count_field(from), -1)
    redis.call('HINCRBY', ks.parent, count_field(to), 1)
    move_child(prefix, job_id, index, from, to)
  else
    move_root(job_key, job_id, from, to, ks)
  end
end
