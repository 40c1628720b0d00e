-- recordCalls: appends a batch of call entries to the recent-calls list, keeps the newest, and
-- publishes the batch so every replica's console sees it, in one round trip.
-- KEYS[1] list (newest first); ARGV[1] how many to keep, ARGV[2] channel, ARGV[3] the batch as
-- published (the entries, one a line), ARGV[4..] the entries, oldest first. Safe to repeat: a repeat only
-- shows the batch twice in the feed.
for i = 4, #ARGV do redis.call('LPUSH', KEYS[1], ARGV[i]) end
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[1]) - 1)
redis.call('PUBLISH', ARGV[2], ARGV[3])
return #ARGV - 3
