-- nowMs(): the server clock in ms (every replica of toolport reads the same clock).
local function nowMs()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
end
