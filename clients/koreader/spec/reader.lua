--[[
Runs bindery.koplugin's main.lua — the plugin as KOReader loads it — on stand-ins for KOReader's
modules (fake_koreader.lua), against a real server: the user's taps become menu callbacks, time is a
fake clock. Used by the end-to-end test, one phase per run; after each step it prints one JSON line
and waits for a line on stdin (the test checks the server in between).

  luajit reader.lua <dir> register   file browser: set the server, register, wait for approval
  luajit reader.lua <dir> read       open the book, turn pages, delete a highlight, close
  luajit reader.lua <dir> reopen     open the book again: the server's position and highlights arrive

<dir> holds session.json ({server, book, title, author, percentage, xpointer, turn_to, annotations})
and what KOReader would keep: settings.json (reader settings) and book.json (the book's sidecar).
--]]
local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
package.path = here .. "?.lua;" .. here .. "../bindery.koplugin/?.lua;" .. package.path

local cjson = require("cjson")
local F = require("fake_koreader")
local Client = require("binderyclient")

local dir, phase = arg[1], arg[2]
local function read_json(path)
    local f = assert(io.open(path, "rb"))
    local v = Client.strip_nulls(cjson.decode(f:read("*a")), cjson.null)
    f:close()
    return v
end
local session = read_json(dir .. "/session.json")

G_reader_settings = F.settings(dir .. "/settings.json", cjson) -- luacheck: ignore (KOReader's global)
local Bindery = dofile(here .. "../bindery.koplugin/main.lua")

local shown_before = 0
local function step(event, extra)
    local out = extra or {}
    out.event = event
    out.shown = {}
    for i = shown_before + 1, #F.shown do
        table.insert(out.shown, { kind = F.shown[i].kind, text = F.shown[i].text, closed = F.shown[i].closed or false })
    end
    shown_before = #F.shown
    out.warnings = {}
    for _, l in ipairs(F.log) do
        if l:match("^warn") then table.insert(out.warnings, l) end
    end
    io.stdout:write(cjson.encode(out), "\n")
    io.stdout:flush()
    io.read("*l")
end

local function settings() return G_reader_settings:readSetting("bindery") or {} end

if phase == "register" then
    local fm = Bindery:new{ ui = F.ui() }
    -- Server: typed with a trailing slash and spaces
    F.menu(fm.ui, "Server:").callback(nil)
    F.typed = "  " .. session.server .. "/  "
    F.last("InputDialog").buttons[1][2].callback()
    local reg_entry = F.menu(fm.ui, "Register this device")
    step("server", { server = settings().server, menu = F.menu(fm.ui, "Server:").text_func(), register_enabled = reg_entry.enabled_func() })
    reg_entry.callback(nil)
    local message = F.last("InfoMessage")
    F.advance(5) -- one poll before the approval
    step("registered", { pending = settings().pending ~= nil, menu = reg_entry.text_func(), message = message.text })
    F.advance(5) -- the next poll, after the approval
    local s = settings()
    step("approved", {
        device_id = s.device_id,
        device_name = s.device_name,
        has_token = type(s.token) == "string" and s.token:sub(1, 4) == "bdt_",
        pending = s.pending ~= nil,
        message_closed = message.closed or false,
        menu = reg_entry.text_func(),
    })
    fm:onCloseWidget()
    os.exit(0)
end

local book = {
    file = session.book,
    title = session.title,
    author = session.author,
    percentage = session.percentage,
    xpointer = session.xpointer,
    annotations = session.annotations or {},
    doc_settings = F.settings(dir .. "/book.json", cjson),
}
local reader = Bindery:new{ ui = F.ui(book) }
local function state(extra)
    local out = extra or {}
    out.percentage = book.percentage
    out.xpointer = book.xpointer
    out.annotations = book.annotations
    out.sidecar = book.doc_settings:readSetting("bindery")
    out.events = F.events
    return out
end

if phase == "read" then
    reader:onReaderReady()
    F.advance(0)
    step("opened", state())
    -- pages turned: nothing is sent until the reader stops for a while
    book.percentage, book.xpointer = session.turn_to.percentage, session.turn_to.xpointer
    reader:onPageUpdate(12)
    F.advance(4)
    reader:onPosUpdate()
    F.advance(4)
    step("turning", state())
    F.advance(30)
    step("idle", state())
    -- the first highlight deleted in KOReader, then the book closed
    table.remove(book.annotations, 1)
    reader:onCloseDocument()
    step("closed", state())
    reader:onCloseWidget()
elseif phase == "reopen" then
    reader:onReaderReady()
    F.advance(0)
    local asked = F.last("ConfirmBox")
    step("asked", state({ question = asked and asked.text }))
    asked.ok_callback()
    step("moved", state())
    -- "Sync now" from the menu, with nothing changed: the position stays
    local events = #F.events
    F.menu(reader.ui, "Sync now").callback()
    step("synced", state({ moves = #F.events - events }))
    reader:onCloseWidget()
end
os.exit(0)
