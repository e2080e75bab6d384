-- Why this exists: exercises closures, upvalues, varargs, tail calls, recursion and
-- coroutines (generators, wrap, status, yield across pcall, error inside coroutines) in a
-- dtld-linked Lua.
local function counter(start)
    local n = start
    return function(step) n = n + (step or 1); return n end
end
local c1, c2 = counter(0), counter(100)
c1(); c1(5); c2()
print("counters", c1(), c2())

-- shared upvalue between closures
local function pair()
    local v = 0
    return function() v = v + 1 end, function() return v end
end
local inc, get = pair()
for _ = 1, 10 do inc() end
print("shared", get())

-- closures in loops capture fresh variables
local fs = {}
for i = 1, 5 do fs[i] = function() return i * i end end
local r = {}
for i = 1, 5 do r[i] = fs[i]() end
print("loop closures", table.concat(r, ","))

-- varargs
local function va(...)
    local n = select("#", ...)
    return n, select(n > 0 and n or 1, ...)
end
print("varargs", va(), va(1, nil, 3), va(nil, nil))
print("pack", table.pack(va(4, 5, 6)).n)

-- deep tail calls must not grow the stack
local function loop(n, acc) if n == 0 then return acc end return loop(n - 1, acc + n) end
print("tail", loop(1000000, 0))

-- recursion
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print("fib", fib(25))
local function ack(m, n)
    if m == 0 then return n + 1 end
    if n == 0 then return ack(m - 1, 1) end
    return ack(m - 1, ack(m, n - 1))
end
print("ack", ack(2, 3), ack(3, 3))

-- coroutines: generator
local function range(n)
    return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end)
end
local s = 0
for i in range(100) do s = s + i end
print("generator", s)

-- passing values in and out
local co = coroutine.create(function(a, b)
    local c = coroutine.yield(a + b)
    local d, e = coroutine.yield(c * 2)
    return d + e, "done"
end)
print(coroutine.resume(co, 1, 2))
print(coroutine.status(co), coroutine.resume(co, 10))
print(coroutine.resume(co, 3, 4))
print(coroutine.status(co), coroutine.resume(co))

-- errors inside coroutines, yield across pcall, isyieldable, close
local bad = coroutine.create(function() error("boom") end)
print("error in co", coroutine.resume(bad))
local y = coroutine.wrap(function()
    local ok, v = pcall(function() return coroutine.yield("from inside pcall") .. "!" end)
    return tostring(ok) .. ":" .. v
end)
print(y(), y("resumed"))
print("yieldable main", coroutine.isyieldable())
local suspended = coroutine.create(function() coroutine.yield() end)
coroutine.resume(suspended)
print("close", coroutine.close(suspended), coroutine.status(suspended))

-- producer/consumer pipeline
local function producer()
    return coroutine.create(function()
        for _, w in ipairs({"alpha", "beta", "gamma", "delta"}) do coroutine.yield(w) end
    end)
end
local function filter(src)
    return coroutine.create(function()
        while true do
            local ok, v = coroutine.resume(src)
            if not v then return end
            coroutine.yield(v:upper())
        end
    end)
end
local f = filter(producer())
local got = {}
while true do
    local _, v = coroutine.resume(f)
    if not v then break end
    got[#got + 1] = v
end
print("pipeline", table.concat(got, " "))

-- many live coroutines
local cos = {}
for i = 1, 1000 do
    cos[i] = coroutine.create(function(x) while true do x = coroutine.yield(x + i) end end)
end
local acc = 0
for round = 1, 3 do
    for i = 1, #cos do local _, v = coroutine.resume(cos[i], round); acc = acc + v end
end
print("many coroutines", acc)
print("closures: ok")
