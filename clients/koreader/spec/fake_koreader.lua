--[[
A stand-in for the few KOReader modules bindery.koplugin's main.lua uses, so its glue (events, menu,
dialogs, settings, scheduling) runs under a plain LuaJIT. The stand-ins record what the plugin shows
and asks for; time is a fake clock the script moves on. They mirror the KOReader calls main.lua makes
(UIManager:scheduleIn/nextTick/unschedule/show/close, Event:new, WidgetContainer:extend, LuaSettings'
readSetting/saveSetting, NetworkMgr:isConnected/willRerunWhenOnline), not KOReader itself.
--]]
local F = { shown = {}, events = {}, actions = {}, tasks = {}, now = 0, log = {} }

local function preload(name, value)
    package.preload[name] = function() return value end
end

-- settings: a table kept in a JSON file between runs, as KOReader keeps settings.reader.lua
function F.settings(path, json)
    local data = {}
    local f = io.open(path, "rb")
    if f then
        data = json.decode(f:read("*a"))
        f:close()
    end
    local s = { data = data }
    function s:readSetting(key) return self.data[key] end
    function s:saveSetting(key, value)
        self.data[key] = value
        local out = assert(io.open(path, "wb"))
        out:write(json.encode(self.data))
        out:close()
    end
    return s
end

local WidgetContainer = {}
function WidgetContainer:extend(o)
    o = o or {}
    setmetatable(o, self)
    self.__index = self
    return o
end
function WidgetContainer:new(o)
    o = self:extend(o)
    if o.init then o:init() end
    return o
end
preload("ui/widget/container/widgetcontainer", WidgetContainer)

local function widget(kind)
    local W = {}
    function W:new(o)
        o = o or {}
        o.kind = kind
        setmetatable(o, { __index = self })
        return o
    end
    return W
end
local InputDialog = widget("InputDialog")
function InputDialog:getInputText() return F.typed end
function InputDialog:onShowKeyboard() end
preload("ui/widget/inputdialog", InputDialog)
preload("ui/widget/infomessage", widget("InfoMessage"))
preload("ui/widget/confirmbox", widget("ConfirmBox"))

local Event = {}
function Event:new(name, ...)
    return { handler = "on" .. name, name = name, args = { ... } }
end
preload("ui/event", Event)

local UIManager = {}
function UIManager:show(w) table.insert(F.shown, w) end
function UIManager:close(w) w.closed = true end
function UIManager:setDirty() end
function UIManager:scheduleIn(seconds, fn) table.insert(F.tasks, { at = F.now + seconds, fn = fn }) end
function UIManager:nextTick(fn) self:scheduleIn(0, fn) end
function UIManager:unschedule(fn)
    for i = #F.tasks, 1, -1 do
        if F.tasks[i].fn == fn then table.remove(F.tasks, i) end
    end
end
preload("ui/uimanager", UIManager)

--- Moves the clock on by `seconds`, running every task that falls due, in order.
function F.advance(seconds)
    local stop = F.now + seconds
    while true do
        local first
        for i, t in ipairs(F.tasks) do
            if t.at <= stop and (not first or t.at < F.tasks[first].at) then first = i end
        end
        if not first then break end
        local t = table.remove(F.tasks, first)
        F.now = math.max(F.now, t.at)
        t.fn()
    end
    F.now = stop
end

preload("ui/network/manager", {
    -- a server on the local network: connected, with no internet host name to resolve
    isConnected = function() return true end,
    isOnline = function() return false end,
    willRerunWhenOnline = function() return false end,
})
preload("device", { model = "Kobo Libra 2" })
preload("dispatcher", { registerAction = function(_, name, spec) F.actions[name] = spec end })
local function log(level)
    return function(...)
        local parts = {}
        for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
        table.insert(F.log, level .. " " .. table.concat(parts, " "))
    end
end
preload("logger", { dbg = log("dbg"), info = log("info"), warn = log("warn"), err = log("err") })
preload("ffi/util", {
    template = function(s, ...)
        local args = { ... }
        return (s:gsub("%%(%d+)", function(n) return tostring(args[tonumber(n)]) end))
    end,
})
preload("gettext", function(s) return s end)

--- The ui a plugin instance gets: the file browser's (no book) or a reader's (`book` given).
function F.ui(book)
    local ui = { menu_items = {} }
    ui.menu = { registerToMainMenu = function(_, plugin) plugin:addToMainMenu(ui.menu_items) end }
    function ui:handleEvent(ev)
        table.insert(F.events, { name = ev.name, args = ev.args })
        if book and ev.name == "GotoXPointer" then book.xpointer = ev.args[1] end
        if book and ev.name == "GotoPercent" then
            -- KOReader would name the new place; the stand-in cannot, so it has none
            book.percentage, book.xpointer = ev.args[1] / 100, nil
        end
    end
    if not book then return ui end
    ui.dialog = {}
    ui.document = {
        file = book.file,
        info = { has_pages = false },
        getProps = function() return { title = book.title, authors = book.author } end,
    }
    ui.doc_settings = book.doc_settings
    ui.rolling = {
        getLastPercent = function() return book.percentage end,
        getLastProgress = function() return book.xpointer end,
    }
    ui.annotation = { annotations = book.annotations }
    function ui.annotation:addItem(item)
        table.insert(self.annotations, item)
        return #self.annotations
    end
    ui.bookmark = {
        removeItem = function(_, item, index)
            assert(ui.annotation.annotations[index] == item, "removeItem: index and item disagree")
            table.remove(ui.annotation.annotations, index)
        end,
    }
    return ui
end

--- The menu entry whose text (or text_func's) starts with `prefix`.
function F.menu(ui, prefix)
    for _, item in ipairs(ui.menu_items.bindery.sub_item_table) do
        local text = item.text or item.text_func()
        if text:sub(1, #prefix) == prefix then return item end
    end
    error("no menu entry " .. prefix)
end

--- The last widget shown of a kind.
function F.last(kind)
    for i = #F.shown, 1, -1 do
        if F.shown[i].kind == kind then return F.shown[i] end
    end
end

return F
