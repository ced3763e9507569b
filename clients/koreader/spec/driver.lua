--[[
Drives bindery.koplugin's client (binderyclient.lua) outside KOReader, for the end-to-end test and
for trying a server by hand. Needs LuaJIT with luasocket and lua-cjson.

  luajit driver.lua sha256 <file>                      the file's SHA-256 as the plugin computes it
  luajit driver.lua enroll <state.json> <server> <name> register, print the approval address, poll
                                                       until approved, keep the credential in state
  luajit driver.lua push <state.json> <session.json>   push position, deletions and annotations
  luajit driver.lua pull <state.json> <session.json>   pull the book's metadata: position to go to,
                                                       annotations to add and drop

A session is the open book as the plugin sees it: {file, title?, author?, percentage, xpointer?,
annotations = [KOReader annotation items]}. The state keeps the server, the credential, and per book
the uuid learned and the keys synced, as the plugin keeps them in its settings. Every step prints one
JSON line on stdout.
--]]
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
package.path = here .. "../bindery.koplugin/?.lua;" .. package.path

local cjson = require("cjson")
local socket = require("socket")
local Client = require("binderyclient")
local sha256 = require("binderysha256")

-- an empty table is written as [] where the server or the test expects a list
local function say(t)
    io.stdout:write(cjson.encode(t), "\n")
    io.stdout:flush()
end

local function fail(message, err)
    say({ event = "error", message = message, status = err and err.status, error = err and err.message })
    os.exit(1)
end

local function read_json(path)
    local f = io.open(path, "rb")
    if not f then return nil end
    local text = f:read("*a")
    f:close()
    return Client.strip_nulls(cjson.decode(text), cjson.null)
end

local function write_json(path, value)
    local f = assert(io.open(path, "wb"))
    f:write(cjson.encode(value))
    f:close()
end

local command = arg[1]

if command == "sha256" then
    say({ event = "sha256", sha256 = sha256.file(arg[2]) })
    os.exit(0)
end

local state_path = arg[2]
if not state_path then fail("usage: driver.lua sha256|enroll|push|pull ...") end

if command == "enroll" then
    local client = Client.new({ server = arg[3] })
    local reg, err = client:register(arg[4] or "KOReader", "driver")
    if not reg then fail("registration refused", err) end
    say({
        event = "registered",
        user_code = reg.user_code,
        auth_url = reg.auth_url,
        approval_url = client:approval_url(reg),
        poll_interval = reg.poll_interval,
        setup_instructions = reg.setup_instructions,
    })
    local interval = tonumber(reg.poll_interval) or 5
    local deadline = os.time() + (tonumber(reg.expires_in) or 600)
    while os.time() <= deadline do
        socket.sleep(interval)
        local status, body = client:poll(reg.device_code)
        if status == "approved" then
            write_json(state_path, { server = client.server, token = body.device_token, device_id = body.device_id, name = body.name, books = {} })
            say({ event = "approved", device_id = body.device_id, name = body.name })
            os.exit(0)
        elseif status == "failed" then
            fail("registration ended", body)
        else
            say({ event = status })
        end
    end
    fail("registration expired")
end

local state = read_json(state_path) or fail("no state: enroll first")
local session = read_json(arg[3] or "") or fail("no session file")
local client = Client.new({ server = state.server, token = state.token })
state.books = state.books or {}
local kept = state.books[session.file] or {}

local book = {
    identity = Client.identity(session.file, { title = session.title, authors = session.author }, kept.sha256),
    percentage = session.percentage,
    xpointer = session.xpointer,
    annotations = session.annotations or {},
    synced = kept.synced or {},
}
book.identity.uuid = kept.uuid

local function keep(result)
    state.books[session.file] = { uuid = book.identity.uuid, sha256 = book.identity.sha256, synced = result.synced }
    if next(result.synced) == nil then state.books[session.file].synced = nil end
    write_json(state_path, state)
end

if command == "push" then
    local result, err = client:push(book)
    if not result then fail("push failed", err) end
    keep(result)
    say({ event = "pushed", uuid = result.uuid, matched_by = book.matched_by, sha256 = book.identity.sha256, progress = result.progress, annotations = result.annotations, remove = result.remove, synced = result.synced })
elseif command == "pull" then
    local result, err = client:pull(book, state.name)
    if not result then fail("pull failed", err) end
    keep(result)
    say({ event = "pulled", uuid = result.uuid, position = result.position or cjson.null, position_reason = result.position_reason, add = result.add, remove = result.remove, synced = result.synced })
else
    fail("unknown command " .. tostring(command))
end
