-- wrk script: POST one request body over keep-alive and report as one JSON line. The
-- body's messageId "bench-000...0" (wire.MESSAGE_ID) is made new for each request, of this run
-- (BENCH_RUN), thread and count: n8n-a2a runs a message sent again only once.
-- Environment: BENCH_BODY_FILE (the body), BENCH_PATH, BENCH_A2A (send A2A-Version: 1.0
-- when "1"), BENCH_MAX_REQUESTS (stop each thread after that many responses; 0: no limit),
-- BENCH_EXPECT (count every response that is not a 200 holding this text as unexpected).
-- wrk counts a response once its body is complete: for an SSE stream, the last chunk,
-- sent after the server closes the stream.
local function read_file(path)
  local file = assert(io.open(path, "rb"))
  local content = file:read("*a")
  file:close()
  return content
end

wrk.method = "POST"
wrk.path = os.getenv("BENCH_PATH") or "/"
wrk.body = read_file(os.getenv("BENCH_BODY_FILE"))
local run = os.getenv("BENCH_RUN") or "run"
local placeholder = '"bench-' .. string.rep("0", 26) .. '"' -- wire.MESSAGE_ID, quoted
local at = wrk.body:find(placeholder, 1, true)
local before = at and wrk.body:sub(1, at) -- through the opening quote
local after = at and wrk.body:sub(at + #placeholder - 1) -- from the closing quote
wrk.headers["Content-Type"] = "application/json"
if os.getenv("BENCH_A2A") == "1" then
  wrk.headers["A2A-Version"] = "1.0"
end

local max_requests = tonumber(os.getenv("BENCH_MAX_REQUESTS") or "0")
local expect = os.getenv("BENCH_EXPECT") or ""
local seen = 0
unexpected = 0 -- a global: done() reads it from each thread

local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_n", #threads)
end

if before then
  local made = 0
  function request()
    made = made + 1
    local id = run .. "-" .. thread_n .. "-" .. made -- thread_n: a global, set by setup()
    return wrk.format(nil, nil, nil, before .. id .. after)
  end
end

-- Only defined when needed: a response() hook makes wrk hand every body to Lua.
if max_requests > 0 or expect ~= "" then
  function response(status, headers, body)
    if expect ~= "" and (status ~= 200 or not body:find(expect, 1, true)) then
      unexpected = unexpected + 1
    end
    seen = seen + 1
    if max_requests > 0 and seen >= max_requests then
      wrk.thread:stop()
    end
  end
end

function done(summary, latency, requests)
  local errors = summary.errors
  local wrong = 0
  for _, thread in ipairs(threads) do
    wrong = wrong + (thread:get("unexpected") or 0)
  end
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"mean_us":%.1f,' ..
    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"status_errors":%d,"timeouts":%d,' ..
    '"unexpected":%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.mean, errors.connect, errors.read, errors.write, errors.status, errors.timeout,
    wrong))
end
