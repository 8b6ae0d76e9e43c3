--[[
  progress: records how far the attempt holding a job has got (per page).

  Input:
    KEYS[1]  job key
    ARGV[1]  attempt (from claim)
    ARGV[2]  stage, e.g. 'page 2/5'
    ARGV[3]  progress, 0..1

  Output:
    1   recorded
    -1  no such job
    -2  not processing any more
    -3  another attempt holds the job
]]

local job_key = KEYS[1]
local attempt, stage, progress = ARGV[1], ARGV[2], ARGV[3]

local f = redis.call('HMGET', job_key, 'status', 'attempts')
if not f[1] then return -1 end
if f[1] ~= 'processing' then return -2 end
if f[2] ~= attempt then return -3 end
redis.call('HSET', job_key, 'stage', stage, 'progress', progress)
return 1
