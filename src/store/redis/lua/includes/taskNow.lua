-- The store's clock in epoch ms: leases are compared on one clock whatever the replicas' clocks say.
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
