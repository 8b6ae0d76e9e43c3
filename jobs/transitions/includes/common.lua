-- Helpers every transition shares.
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

-- One ZADD of many {score, member, ...} pairs, in slices: unpack takes a few
-- thousand values at most.
local function zadd_all(key, pairs_)
  for from = 1, #pairs_, 2000 do
    redis.call('ZADD', key, unpack(pairs_, from, math.min(from + 1999, #pairs_)))
  end
end

-- A job's lane, which of its model's queues its messages go to: the default
-- lane for a job stored before lanes existed.  `value` is its priority field as read.
local function lane_of(value)
  if value == PRIORITY.interactive then return value end
  return DEFAULT_PRIORITY
end
