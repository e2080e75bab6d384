-- Why this exists: exercises error handling in a dtld-linked Lua (error with strings, tables
-- and levels, pcall/xpcall with handlers and tracebacks, runtime errors from the VM, assert,
-- load of bad chunks) and output through io.write/io.stdout, string buffers, and load/require
-- of in-memory chunks. Nothing printed depends on addresses or time.
print(pcall(error, "plain"))
print(pcall(error, "with level", 1))
print(pcall(error))
print(select(2, pcall(error, {code = 42})).code)
print(pcall(function() local t = nil; return t.x end))
print(pcall(function() return 1 + {} end))
print(pcall(function() return #5 end))
print(pcall(function() return "a" < 1 end))
print(pcall(function() undefined_function() end))
print(pcall(string.rep))
print(pcall(setmetatable, 1, {}))
print(pcall(assert, false, "assert message"))
print(pcall(assert, nil))
print(pcall(function() error(setmetatable({}, {__tostring = function() return "custom" end})) end))

local function handler(e) return "handled: " .. tostring(e) end
print(xpcall(function() error("deep") end, handler))
print(xpcall(function(a, b) return a + b end, handler, 2, 3))
local tb = select(2, xpcall(function() local x = nil; return x() end, debug.traceback))
print((tb:gsub("\n.*", "")))   -- first line only: the rest names C frames

-- nested pcall and rethrow
local ok, e = pcall(function()
    local ok2, e2 = pcall(error, "inner")
    error("outer after " .. tostring(e2), 0)
end)
print(ok, e)

-- error objects keep identity
local obj = {}
print(select(2, pcall(error, obj)) == obj)

-- load with syntax errors and with environments
print(load("return +"))
print(load("x = "))
local chunk = load("return a + b", "=sum", "t", {a = 2, b = 40})
print(chunk())
local parts = {"return ", "1 ", "+ ", "1"}
local i = 0
print(load(function() i = i + 1; return parts[i] end)())
print(pcall(load("error('from chunk')", "=mychunk")))

-- stack overflow is caught
local function rec() return 1 + rec() end
local okso, eso = pcall(rec)
print("stack overflow caught", okso, (eso:match("stack overflow")))

-- string.rep memory errors are errors, not crashes
print(pcall(string.rep, "x", -1))

-- io.write returns the file, chaining; io.stdout:write; string buffers via table.concat
io.write("io.write ", 1, " ", 2.5, "\n"):write("chained\n")
io.stdout:write("stdout:write ok\n")
local buf = {}
for k = 1, 5 do buf[#buf + 1] = ("line %d"):format(k) end
io.write(table.concat(buf, "\n"), "\n")
print(io.type(io.stdout), io.type(42))

-- a module through package.preload and require
package.preload["mymod"] = function(name) return {name = name, answer = 42} end
local m = require("mymod")
print(m.name, m.answer, require("mymod") == m, package.loaded.mymod == m)

-- goto and integer for loops with edge steps
local n = 0
for k = math.maxinteger - 2, math.maxinteger do n = n + 1 end
for k = 10, 1, -3 do n = n + k end
::again:: n = n + 1
if n < 30 then goto again end
print("loops", n)

-- os functions that are deterministic
print(os.getenv("DTLD_SURELY_UNSET_VARIABLE"), type(os.clock()), os.date("!%Y-%m-%d", 0))
print(os.time({year = 2000, month = 1, day = 1, hour = 12}) - os.time({year = 2000, month = 1, day = 1, hour = 0}))
print("errors: ok")
