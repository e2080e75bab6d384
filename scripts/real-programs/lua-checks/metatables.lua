-- Why this exists: exercises metatables and metamethods (arithmetic, comparison, __index
-- chains, __newindex, __call, __concat, __len, __eq, __close, __gc, __tostring, __name) and a
-- small class system in a dtld-linked Lua.
local Vec = {}
Vec.__index = Vec
local function vec(x, y) return setmetatable({x = x, y = y}, Vec) end
Vec.__add = function(a, b) return vec(a.x + b.x, a.y + b.y) end
Vec.__sub = function(a, b) return vec(a.x - b.x, a.y - b.y) end
Vec.__mul = function(a, b)
    if type(a) == "number" then return vec(a * b.x, a * b.y) end
    if type(b) == "number" then return vec(a.x * b, a.y * b) end
    return a.x * b.x + a.y * b.y
end
Vec.__unm = function(a) return vec(-a.x, -a.y) end
Vec.__eq = function(a, b) return a.x == b.x and a.y == b.y end
Vec.__lt = function(a, b) return a:len2() < b:len2() end
Vec.__le = function(a, b) return a:len2() <= b:len2() end
Vec.__len = function(a) return 2 end
Vec.__tostring = function(a) return string.format("(%g, %g)", a.x, a.y) end
Vec.__concat = function(a, b) return tostring(a) .. tostring(b) end
Vec.__idiv = function(a, n) return vec(a.x // n, a.y // n) end
Vec.__mod = function(a, n) return vec(a.x % n, a.y % n) end
function Vec:len2() return self.x * self.x + self.y * self.y end

local a, b = vec(1, 2), vec(3, 4)
print(tostring(a + b), tostring(a - b), a * b, tostring(2 * a), tostring(-a))
print(a == vec(1, 2), a ~= b, a < b, b <= a, #a, a .. b)
print(tostring(vec(7, 9) // 2), tostring(vec(7, 9) % 4))

-- inheritance chain via __index
local Animal = {}
Animal.__index = Animal
function Animal.new(name, sound) return setmetatable({name = name, sound = sound}, Animal) end
function Animal:speak() return self.name .. " says " .. self.sound end
local Dog = setmetatable({}, {__index = Animal})
Dog.__index = Dog
function Dog.new(name) local d = Animal.new(name, "woof"); return setmetatable(d, Dog) end
function Dog:fetch() return self.name .. " fetches" end
local d = Dog.new("rex")
print(d:speak(), d:fetch(), getmetatable(d) == Dog, rawget(d, "speak"))

-- __index / __newindex functions, rawset, proxies
local log = {}
local store = {}
local proxy = setmetatable({}, {
    __index = function(_, k) log[#log + 1] = "get " .. k; return store[k] end,
    __newindex = function(_, k, v) log[#log + 1] = "set " .. k; rawset(store, k, v) end,
})
proxy.a = 1; proxy.b = proxy.a + 1; local _ = proxy.zzz
print(table.concat(log, ","), store.a, store.b, rawget(proxy, "a"))

-- defaults table
local defaults = setmetatable({}, {__index = function() return 0 end})
defaults.x = defaults.x + 5
print("defaults", defaults.x, defaults.y)

-- __call and memoization
local calls = 0
local memo = setmetatable({}, {__call = function(self, n)
    if self[n] then return self[n] end
    calls = calls + 1
    local v = n < 2 and n or self(n - 1) + self(n - 2)
    self[n] = v
    return v
end})
print("memo fib", memo(80), calls)

-- __close (to-be-closed variables)
local closed = {}
do
    local x <close> = setmetatable({}, {__close = function(_, err) closed[#closed + 1] = "x:" .. tostring(err) end})
    local y <close> = setmetatable({}, {__close = function() closed[#closed + 1] = "y" end})
end
print("close order", table.concat(closed, ","))
local ok, err = pcall(function()
    local z <close> = setmetatable({}, {__close = function(_, e) closed[#closed + 1] = "z:" .. tostring(e):match("boom") end})
    error("boom")
end)
print("close on error", ok, table.concat(closed, ","))

-- __gc finalizers run on collect
local finalized = 0
for _ = 1, 10 do setmetatable({}, {__gc = function() finalized = finalized + 1 end}) end
collectgarbage(); collectgarbage()
print("finalized", finalized)

-- __name, __metatable protection, string metatable
local prot = setmetatable({}, {__metatable = "locked"})
print(getmetatable(prot), pcall(setmetatable, prot, {}))
print(getmetatable("").__index == string, ("abc"):upper())
print("metatables: ok")
