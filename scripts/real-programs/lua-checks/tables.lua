-- Why this exists: exercises tables in a dtld-linked Lua: array/hash parts, table.sort with
-- comparators, insert/remove/move/concat/unpack, the length operator and next/pairs (printed
-- in sorted order, because Lua randomizes its string hash seed per run).
local function sorted_keys(t)
    local ks = {}
    for k in pairs(t) do ks[#ks + 1] = k end
    table.sort(ks, function(a, b)
        if type(a) == type(b) then return a < b end
        return type(a) < type(b)
    end)
    return ks
end

local t = {}
for i = 1, 100 do t[i] = (i * 37) % 101 end
table.sort(t)
for i = 2, #t do assert(t[i - 1] <= t[i]) end
print("sorted", t[1], t[50], t[100], #t)

table.sort(t, function(a, b) return a > b end)
print("desc", table.concat(t, " ", 1, 10))

-- sort records by two keys (total order)
local people = {}
local names = {"ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal"}
for i, n in ipairs(names) do people[i] = {name = n, age = 20 + (i * 7) % 5} end
table.sort(people, function(a, b)
    if a.age ~= b.age then return a.age < b.age end
    return a.name < b.name
end)
local line = {}
for _, p in ipairs(people) do line[#line + 1] = p.name .. ":" .. p.age end
print(table.concat(line, " "))

-- large sort (exercises the randomized pivot path; the result is still deterministic)
math.randomseed(12345)
local big = {}
for i = 1, 5000 do big[i] = math.random(1, 1000000) end
table.sort(big)
local sum = 0
for i = 1, #big do sum = sum + big[i]; if i > 1 then assert(big[i - 1] <= big[i]) end end
print("big", #big, big[1], big[2500], big[5000], sum)

-- insert / remove / move / unpack
local l = {"a", "b", "c"}
table.insert(l, "d"); table.insert(l, 1, "z"); table.insert(l, 3, "m")
print(table.concat(l, ","), table.remove(l), table.remove(l, 1), table.concat(l, ","))
local m = table.move({1, 2, 3, 4, 5}, 2, 4, 1)
print(table.concat(m, ","), table.unpack({10, 20, 30}, 2))
print(select("#", table.unpack({1, nil, 3}, 1, 3)), table.pack(1, nil, 3).n)

-- hash part with mixed keys
local h = {10, 20, 30, x = 1, y = 2, [3.5] = "f", [true] = "t", ["long key"] = {}}
h[100] = "sparse"
local ks = sorted_keys(h)
local parts = {}
for _, k in ipairs(ks) do parts[#parts + 1] = tostring(k) .. "=" .. type(h[k]) end
print(table.concat(parts, " "))

-- growth and shrink, nested tables
local grid = {}
for y = 1, 50 do
    grid[y] = {}
    for x = 1, 50 do grid[y][x] = (x * y) % 7 end
end
local total = 0
for y = 1, 50 do for x = 1, 50 do total = total + grid[y][x] end end
print("grid", total)
for k in pairs(h) do h[k] = nil end
print("emptied", next(h) == nil)

-- word frequency with sorted output
local text = ("the cat and the hat and the bat sat on the mat "):rep(20)
local freq = {}
for w in text:gmatch("%a+") do freq[w] = (freq[w] or 0) + 1 end
local fk = sorted_keys(freq)
table.sort(fk, function(a, b)
    if freq[a] ~= freq[b] then return freq[a] > freq[b] end
    return a < b
end)
for _, w in ipairs(fk) do io.write(w, "=", freq[w], " ") end
io.write("\n")

-- weak tables and the garbage collector
local weak = setmetatable({}, {__mode = "k"})
do
    local key = {}
    weak[key] = 1
end
collectgarbage(); collectgarbage()
print("weak entries after gc", next(weak) == nil)
print("gc count is a number", type(collectgarbage("count")) == "number")
print("tables: ok")
