--[[
Bindery sync for KOReader: the glue between KOReader (events, menus, dialogs, settings) and the
Bindery client (binderyclient.lua), which holds the HTTP work and the sync rules and is tested
outside KOReader. Settings live in the reader settings under "bindery" (server, credential, choices)
and per book in its sidecar under "bindery" (uuid, SHA-256, synced annotation keys).
--]]
local ConfirmBox = require("ui/widget/confirmbox")
local Device = require("device")
local Dispatcher = require("dispatcher")
local Event = require("ui/event")
local InfoMessage = require("ui/widget/infomessage")
local InputDialog = require("ui/widget/inputdialog")
local NetworkMgr = require("ui/network/manager")
local UIManager = require("ui/uimanager")
local WidgetContainer = require("ui/widget/container/widgetcontainer")
local logger = require("logger")
local T = require("ffi/util").template
local _ = require("gettext")

local Client = require("binderyclient")

local STRATEGY = { PROMPT = "prompt", AUTO = "auto", NEVER = "never" }
local PUSH_DELAY = 10 -- seconds of quiet after a page turn before the position is pushed

--- Whether the network is up. A Bindery server is often on the local network only: "connected"
--- (the interface has a gateway) is the test, not "online" (which some versions take to mean that
--- an internet host name resolves).
local function online()
    if NetworkMgr.isConnected then return NetworkMgr:isConnected() and true or false end
    return NetworkMgr:isOnline()
end

local Bindery = WidgetContainer:extend{
    name = "bindery",
    is_doc_only = false,
}

function Bindery:init()
    self.settings = G_reader_settings:readSetting("bindery") or {}
    if self.settings.auto_sync == nil then self.settings.auto_sync = true end
    self.settings.sync_forward = self.settings.sync_forward or STRATEGY.PROMPT
    self.settings.sync_backward = self.settings.sync_backward or STRATEGY.NEVER
    self.push_task = function()
        self.push_scheduled = false
        if online() then self:push(false) end
    end
    self.poll_task = function() self:pollRegistration() end
    Dispatcher:registerAction("bindery_sync_now", { category = "none", event = "BinderySyncNow", title = _("Bindery: sync now"), reader = true })
    self.ui.menu:registerToMainMenu(self)
    -- a registration waiting for approval goes on being polled after a restart
    if self.settings.pending then UIManager:scheduleIn(2, self.poll_task) end
end

function Bindery:onCloseWidget()
    -- the reader or the file browser closing takes its tasks along; the next one schedules its own
    UIManager:unschedule(self.poll_task)
    UIManager:unschedule(self.push_task)
end

function Bindery:saveSettings()
    G_reader_settings:saveSetting("bindery", self.settings)
end

function Bindery:registered()
    return self.settings.server ~= nil and self.settings.token ~= nil
end

local function request(req, timeout)
    -- KOReader's socket timeouts, when available, rather than luasocket's global one: short, as the
    -- reader waits (10 s without a byte, 30 s in all; the defaults are a minute and unbounded)
    local has_socketutil, socketutil = pcall(require, "socketutil")
    if has_socketutil then socketutil:set_timeout(10, 30) end
    local ok, status, body = pcall(Client.socket_request, req, not has_socketutil and timeout or nil)
    if has_socketutil then socketutil:reset_timeout() end
    if not ok then return nil, status end
    return status, body
end

function Bindery:client()
    return Client.new({ server = self.settings.server, token = self.settings.token, request = request })
end

local function notify(text, timeout)
    UIManager:show(InfoMessage:new{ text = text, timeout = timeout })
end

local function describe(err)
    if not err then return _("unknown error") end
    if err.status == 401 then
        return _("the server no longer accepts this device (revoked on the web?); register it again")
    end
    return err.message or _("unknown error")
end

-- Registration ------------------------------------------------------------------------------------

function Bindery:deviceName()
    return self.settings.device_name or T(_("KOReader on %1"), Device.model or "device")
end

function Bindery:register()
    if not self.settings.server then
        notify(_("Set the Bindery server address first."), 3)
        return
    end
    if NetworkMgr:willRerunWhenOnline(function() self:register() end) then return end
    local client = self:client()
    client.token = nil
    local reg, err = client:register(self:deviceName(), Device.model)
    if not reg then
        notify(T(_("The server refused the registration: %1"), describe(err)))
        return
    end
    local url = client:approval_url(reg)
    self.settings.pending = {
        device_code = reg.device_code,
        user_code = reg.user_code,
        url = url,
        interval = tonumber(reg.poll_interval) or 5,
        expires_at = os.time() + (tonumber(reg.expires_in) or 600),
    }
    self:saveSettings()
    self.pending_message = InfoMessage:new{
        text = T(_("Open this address in a browser where you are signed in to Bindery, and approve \"%1\":\n\n%2\n\nCode: %3\n\nThis device checks for the approval every %4 seconds."),
            self:deviceName(), url, reg.user_code, self.settings.pending.interval),
    }
    UIManager:show(self.pending_message)
    UIManager:unschedule(self.poll_task)
    UIManager:scheduleIn(self.settings.pending.interval, self.poll_task)
end

function Bindery:closePendingMessage()
    if self.pending_message then
        UIManager:close(self.pending_message)
        self.pending_message = nil
    end
end

function Bindery:pollRegistration()
    -- the file browser's and the reader's instances share the settings: the other may have finished
    self.settings = G_reader_settings:readSetting("bindery") or self.settings
    local pending = self.settings.pending
    if not pending then return end
    if os.time() > pending.expires_at then
        self.settings.pending = nil
        self:saveSettings()
        self:closePendingMessage()
        notify(_("The registration expired before it was approved. Register again."))
        return
    end
    if not online() then
        UIManager:scheduleIn(pending.interval, self.poll_task)
        return
    end
    local status, body = self:client():poll(pending.device_code)
    if status == "approved" then
        self.settings.token = body.device_token
        self.settings.device_id = body.device_id
        self.settings.device_name = body.name or self.settings.device_name
        self.settings.pending = nil
        self:saveSettings()
        self:closePendingMessage()
        notify(T(_("This device is registered with Bindery as \"%1\"."), self:deviceName()), 4)
        if self.ui.document then self:sync(false) end
    elseif status == "failed" then
        self.settings.pending = nil
        self:saveSettings()
        self:closePendingMessage()
        notify(T(_("The registration ended: %1"), describe(body)))
    else
        -- pending, or the server could not be asked this time
        UIManager:scheduleIn(pending.interval, self.poll_task)
    end
end

function Bindery:forget()
    self.settings.token = nil
    self.settings.device_id = nil
    self.settings.pending = nil
    self:saveSettings()
    UIManager:unschedule(self.poll_task)
end

-- The open book -----------------------------------------------------------------------------------

function Bindery:bookState()
    local doc = self.ui.document
    local kept = self.ui.doc_settings:readSetting("bindery") or {}
    if kept.sha256 == nil then
        -- once per book; false remembers a file too large to hash
        kept.sha256 = Client.identity(doc.file).sha256 or false
        self.ui.doc_settings:saveSetting("bindery", kept)
    end
    local props = self.ui.doc_props or doc:getProps() or {}
    local identity = Client.identity(doc.file, { title = props.title, authors = props.authors }, kept.sha256)
    -- a uuid (and the synced keys) belong to the server they came from
    if kept.server ~= self.settings.server then kept.uuid, kept.synced = nil, nil end
    identity.uuid = kept.uuid
    local has_pages = doc.info.has_pages
    local book = { identity = identity, has_pages = has_pages }
    if has_pages then
        book.percentage = self.ui.paging:getLastPercent()
        book.page = self.ui:getCurrentPage()
        book.page_count = doc:getPageCount()
    else
        book.percentage = self.ui.rolling:getLastPercent()
        book.xpointer = self.ui.rolling:getLastProgress()
    end
    if self.ui.annotation then
        book.annotations = self.ui.annotation.annotations
        book.synced = kept.synced or {}
    else
        -- a KOReader without the annotation module: positions only
        book.annotations, book.synced, book.no_annotations = {}, {}, true
    end
    return book
end

function Bindery:keep(book, synced)
    local kept = self.ui.doc_settings:readSetting("bindery") or {}
    kept.uuid = book.identity.uuid
    kept.server = self.settings.server
    if not book.no_annotations and synced then kept.synced = synced end
    self.ui.doc_settings:saveSetting("bindery", kept)
end

function Bindery:removeAnnotations(keys)
    if not self.ui.annotation or #keys == 0 then return end
    local drop = {}
    for _, k in ipairs(keys) do drop[k] = true end
    for i = #self.ui.annotation.annotations, 1, -1 do
        local a = self.ui.annotation.annotations[i]
        if drop[Client.key_of(a)] then self.ui.bookmark:removeItem(a, i) end
    end
end

function Bindery:addAnnotations(items)
    if not self.ui.annotation then return end
    -- the client gives only what this book can place (an XPointer, or a page of a fixed-layout book)
    for _, item in ipairs(items) do
        if self.ui.document.info.has_pages then item.page = tonumber(item.page) end
        local index = self.ui.annotation:addItem(item)
        local kind = Client.kind_of(item)
        if kind == "highlight" then
            self.ui:handleEvent(Event:new("AnnotationsModified", { item, nb_highlights_added = 1, index_modified = index }))
        elseif kind == "note" then
            self.ui:handleEvent(Event:new("AnnotationsModified", { item, nb_notes_added = 1, index_modified = index }))
        end
    end
end

function Bindery:goTo(target)
    if target.xpointer then
        self.ui:handleEvent(Event:new("GotoXPointer", target.xpointer))
    elseif target.page then
        self.ui:handleEvent(Event:new("GotoPage", target.page))
    else
        self.ui:handleEvent(Event:new("GotoPercent", target.percentage * 100))
    end
end

function Bindery:applyPosition(target, both_ways)
    local strategy = target.forward and self.settings.sync_forward or self.settings.sync_backward
    -- asked for by the user: the further position wins (behind, this device's goes to the server)
    if both_ways then strategy = target.forward and STRATEGY.AUTO or STRATEGY.NEVER end
    if strategy == STRATEGY.AUTO then
        self:goTo(target)
        notify(_("Position synced from Bindery."), 2)
    elseif strategy == STRATEGY.PROMPT then
        UIManager:show(ConfirmBox:new{
            text = T(target.forward and _("Go forward to %1% (read on %2)?") or _("Go back to %1% (read on %2)?"),
                math.floor(target.percentage * 100 + 0.5), target.device or target.client or _("another device")),
            ok_callback = function() self:goTo(target) end,
        })
    end
end

local function not_in_library(err)
    return err and err.status == 404
end

--- Sends the position (and deletions) and the annotations of the open book.
function Bindery:push(interactive, opts)
    if not self:registered() or not self.ui.document then return end
    local book = self:bookState()
    local result, err = self:client():push(book, opts)
    if not result then
        logger.warn("Bindery: push failed", err and err.status, describe(err))
        if interactive then
            notify(not_in_library(err) and _("This book is not in your Bindery library.") or T(_("Bindery sync failed: %1"), describe(err)), 3)
        end
        return nil, err
    end
    self:removeAnnotations(result.remove)
    for _, key in ipairs(result.remove) do result.synced[key] = nil end
    self:keep(book, result.synced)
    if interactive then notify(_("Progress pushed to Bindery."), 2) end
    return result
end

--- Fetches the book's state on the server: moves to its position (as the user chose) and brings its
--- annotations and deletions here.
function Bindery:pull(interactive, both_ways)
    if not self:registered() or not self.ui.document then return end
    local book = self:bookState()
    local result, err = self:client():pull(book, self.settings.device_name)
    if not result then
        logger.warn("Bindery: pull failed", err and err.status, describe(err))
        if interactive then
            notify(not_in_library(err) and _("This book is not in your Bindery library.") or T(_("Bindery sync failed: %1"), describe(err)), 3)
        end
        return nil, err
    end
    if not book.no_annotations then
        self:removeAnnotations(result.remove)
        self:addAnnotations(result.add)
        if #result.add > 0 or #result.remove > 0 then UIManager:setDirty(self.ui.dialog, "ui") end
    end
    self:keep(book, result.synced)
    if result.position then
        self:applyPosition(result.position, both_ways)
    elseif interactive and not both_ways then
        notify(T(_("Nothing to move: %1."), result.position_reason or _("in sync")), 2)
    end
    return result
end

--- Both ways, on request: the server's annotations and deletions come here; its position is taken
--- when it is further on (when it is behind, this device's is the one kept); then this device's
--- position, deletions and annotations go to the server.
function Bindery:sync(interactive)
    if not self:registered() then
        if interactive then notify(_("Register this device with Bindery first."), 3) end
        return
    end
    if interactive and NetworkMgr:willRerunWhenOnline(function() self:sync(interactive) end) then return end
    if self:pull(interactive, true) then self:push(interactive) end
end

function Bindery:schedulePush()
    UIManager:unschedule(self.push_task)
    UIManager:scheduleIn(PUSH_DELAY, self.push_task)
    self.push_scheduled = true
end

-- Events ----------------------------------------------------------------------------------------------

function Bindery:onReaderReady()
    if not (self:registered() and self.settings.auto_sync) then return end
    UIManager:nextTick(function()
        if not online() then return end
        -- on opening, the server's position is asked for first: pushing the opening page would
        -- overwrite a position read further on elsewhere
        if self:pull(false) then self:push(false, { progress = false }) end
    end)
end

function Bindery:onPageUpdate()
    if self:registered() and self.settings.auto_sync and self.ui.document then self:schedulePush() end
end

function Bindery:onPosUpdate()
    self:onPageUpdate()
end

function Bindery:flush()
    if self.push_scheduled then UIManager:unschedule(self.push_task) self.push_scheduled = false end
    if self:registered() and self.settings.auto_sync and self.ui.document and online() then self:push(false) end
end

function Bindery:onCloseDocument()
    self:flush()
end

function Bindery:onSuspend()
    self:flush()
end

function Bindery:onResume()
    if self:registered() and self.settings.auto_sync and self.ui.document then
        UIManager:scheduleIn(1, function()
            if online() then self:pull(false) end
        end)
    end
end

function Bindery:onNetworkConnected()
    if self.settings.pending then
        UIManager:unschedule(self.poll_task)
        UIManager:scheduleIn(1, self.poll_task)
    end
    if self.push_scheduled then self:schedulePush() end
end

function Bindery:onBinderySyncNow()
    self:sync(true)
end

-- Menu ------------------------------------------------------------------------------------------------

local function strategy_menu(self, key)
    local items = {}
    for _, choice in ipairs({ { STRATEGY.AUTO, _("Automatically") }, { STRATEGY.PROMPT, _("Ask") }, { STRATEGY.NEVER, _("Never") } }) do
        items[#items + 1] = {
            text = choice[2],
            checked_func = function() return self.settings[key] == choice[1] end,
            callback = function()
                self.settings[key] = choice[1]
                self:saveSettings()
            end,
        }
    end
    return items
end

function Bindery:editServer(touchmenu)
    local dialog
    dialog = InputDialog:new{
        title = _("Bindery server address"),
        input = self.settings.server or "http://",
        input_hint = "http://192.168.1.10:8080",
        buttons = { {
            { text = _("Cancel"), id = "close", callback = function() UIManager:close(dialog) end },
            {
                text = _("Save"),
                is_enter_default = true,
                callback = function()
                    local server = Client.normalize_server(dialog:getInputText())
                    UIManager:close(dialog)
                    if server ~= self.settings.server then
                        -- a credential belongs to one server
                        self:forget()
                        self.settings.server = server
                        self:saveSettings()
                    end
                    if touchmenu then touchmenu:updateItems() end
                end,
            },
        } },
    }
    UIManager:show(dialog)
    dialog:onShowKeyboard()
end

function Bindery:addToMainMenu(menu_items)
    menu_items.bindery = {
        text = _("Bindery sync"),
        sorting_hint = "tools", -- the Tools menu, next to Progress sync
        sub_item_table = {
            {
                text_func = function()
                    return T(_("Server: %1"), self.settings.server or _("not set"))
                end,
                keep_menu_open = true,
                callback = function(touchmenu) self:editServer(touchmenu) end,
            },
            {
                text_func = function()
                    if self:registered() then return T(_("Registered as \"%1\" (register again)"), self:deviceName()) end
                    if self.settings.pending then return _("Waiting for approval… (show address)") end
                    return _("Register this device")
                end,
                enabled_func = function() return self.settings.server ~= nil end,
                keep_menu_open = true,
                callback = function(touchmenu)
                    if self.settings.pending and not self:registered() then
                        notify(T(_("Approve this device at:\n\n%1\n\nCode: %2"), self.settings.pending.url, self.settings.pending.user_code))
                    else
                        self:register()
                    end
                    if touchmenu then touchmenu:updateItems() end
                end,
            },
            {
                text = _("Sync now"),
                enabled_func = function() return self:registered() and self.ui.document ~= nil end,
                callback = function() self:sync(true) end,
                separator = true,
            },
            {
                text = _("Sync automatically"),
                help_text = _("Pull when a book opens or the device wakes, push a few seconds after page turns, on closing and on suspend."),
                checked_func = function() return self.settings.auto_sync end,
                callback = function()
                    self.settings.auto_sync = not self.settings.auto_sync
                    self:saveSettings()
                end,
            },
            { text = _("When the server is further on"), sub_item_table = strategy_menu(self, "sync_forward") },
            { text = _("When the server is further back"), sub_item_table = strategy_menu(self, "sync_backward"), separator = true },
            {
                text = _("Forget this device"),
                enabled_func = function() return self:registered() or self.settings.pending ~= nil end,
                keep_menu_open = true,
                callback = function(touchmenu)
                    UIManager:show(ConfirmBox:new{
                        text = _("Forget the Bindery credential on this device? Revoke it on the web too (Devices)."),
                        ok_callback = function()
                            self:forget()
                            if touchmenu then touchmenu:updateItems() end
                        end,
                    })
                end,
            },
        },
    }
end

return Bindery
