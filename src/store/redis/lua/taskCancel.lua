-- taskCancel: marks a working task to be cancelled and tells every replica, so the one running it
-- aborts the handler at once (its lease renewal also reads the mark, should the message be missed).
-- KEYS[1] task hash; ARGV[1] id, ARGV[2] signal channel. Returns 1 when marked. Safe to repeat.
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return 0 end
redis.call('HSET', KEYS[1], 'cancel', '1')
redis.call('PUBLISH', ARGV[2], 'cancel:' .. ARGV[1])
return 1
