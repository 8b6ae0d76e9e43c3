-- Helpers shared by every transition.
--
-- Times come from Redis itself so that every timestamp of a group is on one
-- clock.  Numbers are written with string.format because Lua's default
-- number formatting (%.14g) would round microsecond timestamps.

local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function int(n)
  return string.format('%d', n)
end

local function ms_of(us)
  return int(math.floor(us / 1000))
end

-- Key shapes, mirrored from jobs/keys.py (tests check the two agree).
local function job_key_of(prefix, id)
  return prefix .. 'job:' .. id
end

local function payload_key_of(prefix, id)
  return prefix .. 'payload:' .. id
end

local function child_id_of(parent_id, index)
  return parent_id .. '-' .. int(index)
end

local TERMINAL = { completed = true, failed = true, cancelled = true }
