--[[
The Bindery client of the KOReader plugin: HTTP and JSON against a Bindery server, and the sync
rules, without any KOReader module, so it runs (and is tested) under a plain LuaJIT with luasocket
and a JSON library.

  device registration   POST /api/devices/register, POST /api/devices/register/status
  plugin API            /api/sync/koreader/{resolve,progress,metadata/<uuid>,bookmarks}
                        with "Authorization: Device <credential>"

A book on the device is described by a plain table (see `Client:push` and `Client:pull`):
  { identity = {uuid?, sha256, file_path, title?, author?}, percentage (0..1), xpointer?, page?,
    page_count?, has_pages?, annotations = {KOReader annotation items}, synced = {key = kind} }
`synced` is what this device knows the server holds: the keys (and kinds) of annotations it pushed or
pulled. A key in `synced` that is no longer on the device is a deletion made here, sent in the explicit
`deleted_highlights` / `deleted_bookmarks` arrays (the server never deletes by absence).
--]]
local sha256 = require("binderysha256")

local Client = {}
Client.__index = Client

Client.VERSION = "1.0.0"
Client.PREFIX = "/api/sync/koreader"

-- JSON ----------------------------------------------------------------------------------------------

--- A JSON codec {encode, decode, null} from whichever library is at hand (cjson, rapidjson, json).
function Client.default_json()
    local ok, cjson = pcall(require, "cjson")
    if ok then return { encode = cjson.encode, decode = cjson.decode, null = cjson.null } end
    local ok2, rapidjson = pcall(require, "rapidjson")
    if ok2 then return { encode = rapidjson.encode, decode = rapidjson.decode, null = rapidjson.null } end
    local json = require("json")
    return { encode = json.encode, decode = json.decode, null = json.null }
end

-- JSON null becomes nil, so the rest of the code never meets a library's null sentinel
local function strip_nulls(v, null)
    if type(v) ~= "table" then
        if v == null or type(v) == "userdata" then return nil end
        return v
    end
    if v == null then return nil end
    local out = {}
    for k, x in pairs(v) do out[k] = strip_nulls(x, null) end
    return out
end
Client.strip_nulls = strip_nulls

-- Server address and HTTP -----------------------------------------------------------------------------

--- The server address as typed, made usable: trimmed, a scheme added, no trailing slash. nil if empty.
function Client.normalize_server(url)
    if type(url) ~= "string" then return nil end
    url = url:gsub("^%s+", ""):gsub("%s+$", "")
    if url == "" then return nil end
    if not url:match("^[hH][tT][tT][pP][sS]?://") then url = "http://" .. url end
    url = url:gsub("/+$", "")
    return url
end

local function url_encode(s)
    return (tostring(s):gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end
Client.url_encode = url_encode

--- The default transport: luasocket (or luasec for https), a table `{url, method, headers, body}` in,
--- `status, body_text` out (nil and a message when the server cannot be reached). `timeout` (seconds)
--- replaces the library's for this request; nil keeps what the host set (KOReader's socketutil).
function Client.socket_request(req, timeout)
    local ltn12 = require("ltn12")
    local transport
    if req.url:match("^https:") then
        transport = require("ssl.https")
    else
        transport = require("socket.http")
    end
    local old_timeout = transport.TIMEOUT
    if timeout then transport.TIMEOUT = timeout end
    local chunks = {}
    local ok, code = transport.request({
        url = req.url,
        method = req.method,
        headers = req.headers,
        source = req.body and ltn12.source.string(req.body) or nil,
        sink = ltn12.sink.table(chunks),
    })
    transport.TIMEOUT = old_timeout
    if not ok then return nil, tostring(code) end
    if type(code) ~= "number" then return nil, tostring(code) end
    return code, table.concat(chunks)
end

--- A client for one server. opts: server (address), token (device credential), json (codec),
--- request (transport, see socket_request), timeout (seconds), user_agent.
function Client.new(opts)
    local self = setmetatable({}, Client)
    self.server = Client.normalize_server(opts.server)
    self.token = opts.token
    self.json = opts.json or Client.default_json()
    self.transport = opts.request or Client.socket_request
    self.timeout = opts.timeout or 15
    self.user_agent = opts.user_agent or ("bindery.koplugin/" .. Client.VERSION)
    return self
end

--- One request. Returns the decoded body on 2xx; otherwise nil and an error {status, message}.
function Client:call(method, path, body)
    if not self.server then return nil, { status = 0, message = "no server address set" } end
    local headers = { ["Accept"] = "application/json", ["User-Agent"] = self.user_agent }
    local payload
    if body ~= nil then
        payload = self.json.encode(body)
        headers["Content-Type"] = "application/json"
        headers["Content-Length"] = tostring(#payload)
    end
    if self.token then headers["Authorization"] = "Device " .. self.token end
    local status, text = self.transport({ url = self.server .. path, method = method, headers = headers, body = payload }, self.timeout)
    if not status then return nil, { status = 0, message = "cannot reach the server: " .. tostring(text) } end
    local decoded
    if text and text ~= "" then
        local ok, v = pcall(self.json.decode, text)
        if ok then decoded = strip_nulls(v, self.json.null) end
    end
    if status >= 200 and status < 300 then return decoded or {}, nil end
    local message = type(decoded) == "table" and (decoded.error or decoded.message) or nil
    return nil, { status = status, message = message or ("HTTP " .. status), body = decoded }
end

-- Device registration --------------------------------------------------------------------------------

--- Asks the server to register this device. Returns {device_code, user_code, auth_url,
--- verification_uri, poll_interval, expires_in, setup_instructions} or nil, err.
function Client:register(name, model)
    return self:call("POST", "/api/devices/register", { name = name, client = "koreader", model = model })
end

--- The full address the user opens to approve the device.
function Client:approval_url(registration)
    if registration.verification_uri then return registration.verification_uri end
    return self.server .. (registration.auth_url or "")
end

--- One status poll. Returns "pending", "approved" (with {device_id, device_token, name}), or "failed"
--- with a message: expired, rejected, already collected, unknown (the device must register again),
--- or "error" when the server could not be asked (try again later).
function Client:poll(device_code)
    local body, err = self:call("POST", "/api/devices/register/status", { device_code = device_code })
    if body then
        if body.status == "approved" and body.device_token then return "approved", body end
        return "pending", body
    end
    if err.status == 410 or err.status == 403 or err.status == 404 then return "failed", err end
    return "error", err
end

--- Who the credential belongs to: {device_id, user_id, name}, or nil, err (401 once revoked).
function Client:whoami()
    return self:call("GET", "/api/sync/device")
end

-- Books ---------------------------------------------------------------------------------------------

--- Files larger than this are not hashed (a pure-Lua SHA-256 on an e-reader's processor takes seconds
--- per ten megabytes); such a book is found by its file name, or its title and author.
Client.MAX_HASH_BYTES = 64 * 1024 * 1024

--- The book's identity for the server. The SHA-256 is of the file (the caller caches it per book).
function Client.identity(file_path, props, cached_sha256)
    props = props or {}
    -- false: known to be too large to hash
    local hash = cached_sha256
    if hash == nil and file_path then hash = sha256.file(file_path, Client.MAX_HASH_BYTES) end
    local id = {
        file_path = file_path,
        sha256 = hash or nil,
        title = props.title,
        author = props.authors or props.author,
    }
    if type(id.author) == "string" then
        -- KOReader joins several authors with newlines
        id.author = id.author:match("^[^\n]+")
    end
    if id.title == "" then id.title = nil end
    if id.author == "" then id.author = nil end
    return id
end

--- The library's item for a book: {media_item_id, matched_by, ...}, or nil, err (404: not in the library).
function Client:resolve(identity)
    local q = {}
    for _, k in ipairs({ "uuid", "sha256", "file_path", "title", "author" }) do
        if identity[k] then q[#q + 1] = k .. "=" .. url_encode(identity[k]) end
    end
    return self:call("GET", Client.PREFIX .. "/resolve?" .. table.concat(q, "&"))
end

-- Annotations -----------------------------------------------------------------------------------------

--- highlight, note or bookmark, as the server names the kinds.
function Client.kind_of(a)
    if a.pos0 ~= nil then
        if type(a.note) == "string" and a.note ~= "" then return "note" end
        return "highlight"
    end
    return "bookmark"
end

local function deletion_list(kind)
    return kind == "bookmark" and "deleted_bookmarks" or "deleted_highlights"
end

--- The key the server knows an annotation by: the one it gave (pulled), or one made from what never
--- changes in KOReader (creation time and place).
function Client.key_of(a)
    if a.bindery_key then return a.bindery_key end
    local place = a.pos0 or a.page or ""
    if type(place) ~= "string" then place = tostring(place) end
    return "ko-" .. sha256.string(tostring(a.datetime or "") .. "\0" .. place):sub(1, 32)
end

local function wire_position(v)
    if type(v) == "string" then return v end
    return nil -- a fixed-layout highlight's box: the server keeps text positions only
end

--- One annotation in the server's shape. Fixed-layout highlights (a box, not an XPointer) are not sent.
function Client.to_wire(a, book_sha256)
    local kind = Client.kind_of(a)
    local w = {
        dedup_key = Client.key_of(a),
        type = kind,
        text = a.text,
        chapter = a.chapter,
        book_sha256 = book_sha256,
    }
    if kind == "bookmark" then
        -- a bookmark's place: an XPointer (reflowable) or a page number (fixed layout)
        if type(a.page) == "string" then w.pos0 = a.page end
        w.page = tonumber(a.pageno) or tonumber(a.page)
    else
        w.pos0, w.pos1 = wire_position(a.pos0), wire_position(a.pos1)
        if not w.pos0 then return nil end
        w.page = tonumber(a.pageno) or tonumber(a.page)
        w.note = a.note
    end
    if type(a.pos_percent) == "number" then w.percentage = a.pos_percent end
    if w.page and w.page < 1 then w.page = nil end
    -- a colour this device chose; one pulled and unchanged is not echoed (the web's colour stays)
    if a.color and a.color ~= a.bindery_color then w.color = a.color end
    return w
end

--- A pulled annotation as a KOReader item (reflowable: the XPointer is the page).
function Client.from_wire(w)
    local item = {
        bindery_key = w.dedup_key,
        bindery_color = w.color,
        text = w.text,
        note = (w.note and w.note ~= "") and w.note or nil,
        chapter = w.chapter,
        pos_percent = w.percentage,
    }
    if w.type == "bookmark" then
        item.page = w.pos0 or w.page
    else
        item.pos0, item.pos1 = w.pos0, w.pos1
        item.page = w.pos0
        item.drawer = "lighten"
        item.color = (w.color and not w.color:match("^#")) and w.color or "yellow"
    end
    if w.updated_at then
        local y, mo, d, h, mi, s = w.updated_at:match("^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
        if y then item.datetime = string.format("%s-%s-%s %s:%s:%s", y, mo, d, h, mi, s) end
    end
    return item
end

--- The deletions made on this device: keys the server holds (synced) that are no longer here.
function Client.deletions(synced, annotations)
    local here = {}
    for _, a in ipairs(annotations or {}) do here[Client.key_of(a)] = true end
    local out = { deleted_highlights = {}, deleted_bookmarks = {} }
    local keys = {}
    for key in pairs(synced or {}) do keys[#keys + 1] = key end
    table.sort(keys)
    for _, key in ipairs(keys) do
        if not here[key] then table.insert(out[deletion_list(synced[key])], key) end
    end
    return out
end

local function is_xpointer(v)
    return type(v) == "string" and v:sub(1, 6) == "/body/"
end

--- Whether KOReader can place a pulled annotation: reflowable books need an XPointer (the server
--- gives one to every annotation it could place in the text, a web highlight made from a CFI too),
--- and a highlight or note both ends (KOReader draws none without pos1); fixed-layout books take
--- page bookmarks only.
function Client.placeable(item, has_pages)
    if has_pages then return item.pos0 == nil and tonumber(item.page) ~= nil end
    if item.pos0 ~= nil and not (is_xpointer(item.pos0) and is_xpointer(item.pos1)) then return false end
    return is_xpointer(item.page)
end

--- Which pulled annotations to add here and which local ones to drop, and the new `synced`.
--- A server annotation already synced but gone here was deleted here: it waits for the next push and
--- is not brought back. One KOReader cannot place is left alone (not synced, so never deleted from
--- here). A tombstone removes the local annotation with that key.
function Client.merge(annotations, meta, synced, has_pages)
    local here = {}
    for i, a in ipairs(annotations or {}) do here[Client.key_of(a)] = i end
    local new_synced = {}
    for k, v in pairs(synced or {}) do new_synced[k] = v end
    local plan = { add = {}, remove = {}, synced = new_synced }
    for _, list in ipairs({ "highlights", "notes", "bookmarks" }) do
        for _, w in ipairs(meta[list] or {}) do
            local key = w.dedup_key
            if key and not here[key] then
                if not (synced and synced[key]) then
                    local item = Client.from_wire(w)
                    if Client.placeable(item, has_pages) then
                        plan.add[#plan.add + 1] = item
                        new_synced[key] = w.type or Client.kind_of(w)
                    end
                end
            elseif key then
                new_synced[key] = w.type or new_synced[key]
            end
        end
    end
    local deleted = meta.deleted or {}
    for _, list in ipairs({ "highlights", "notes", "bookmarks" }) do
        for _, key in ipairs(deleted[list] or {}) do
            if here[key] then plan.remove[#plan.remove + 1] = key end
            new_synced[key] = nil
        end
    end
    return plan
end

-- Positions -----------------------------------------------------------------------------------------

--- Where to go for the server's position, or nil when there is nothing to do. Returns
--- {xpointer | page | percentage, percentage, forward, device, client}; `forward` tells whether the
--- server's place is further on than this one (ask or go, as the user chose for each direction).
function Client.decide_position(meta, here, own_device_name)
    if not meta or type(meta.percentage) ~= "number" then return nil, "no position on the server" end
    local p = meta.progress or {}
    if own_device_name and p.client == "koreader" and p.device == own_device_name then
        return nil, "the latest position is this device's"
    end
    if meta.koreader_xpointer and here.xpointer and meta.koreader_xpointer == here.xpointer then
        return nil, "already at the server's position"
    end
    local hp = here.percentage or 0
    if math.abs(meta.percentage - hp) < 0.0005 then return nil, "already at the server's position" end
    local target = { percentage = meta.percentage, forward = meta.percentage > hp, device = p.device, client = p.client }
    if here.has_pages and tonumber(meta.page) then
        target.page = tonumber(meta.page)
    elseif not here.has_pages and meta.koreader_xpointer then
        target.xpointer = meta.koreader_xpointer
    elseif here.has_pages and here.page_count then
        target.page = math.max(1, math.floor(meta.percentage * here.page_count + 0.5))
    end
    return target
end

-- Sync ------------------------------------------------------------------------------------------------

local function copy(t)
    local out = {}
    for k, v in pairs(t or {}) do out[k] = v end
    return out
end

--- The book's item on the server, by the uuid learned before or by resolving its identity.
function Client:book_uuid(book)
    if book.identity.uuid then return book.identity.uuid end
    local found, err = self:resolve(book.identity)
    if not found then return nil, err end
    book.identity.uuid = found.media_item_id
    book.matched_by = found.matched_by
    return found.media_item_id
end

--- Pushes the position (with this device's deletions) and the annotations. Returns
--- {uuid, progress (the server's answer), annotations (its answer), synced, remove (keys deleted on
--- the server, to drop here)} or nil, err. opts: progress (default true), annotations (default true).
function Client:push(book, opts)
    opts = opts or {}
    local uuid, err = self:book_uuid(book)
    if not uuid then return nil, err end
    local id = book.identity
    local synced = copy(book.synced)
    local result = { uuid = uuid, synced = synced, remove = {} }
    if opts.progress ~= false then
        local entry = {
            uuid = uuid,
            sha256 = id.sha256,
            file_path = id.file_path,
            title = id.title,
            author = id.author,
            percentage = math.max(0, math.min(1, book.percentage or 0)),
            epubcfi = book.xpointer,
            page = book.page,
            page_count = book.page_count,
        }
        local del = Client.deletions(synced, book.annotations)
        -- an empty list is left out: the JSON libraries cannot tell an empty array from an object
        if #del.deleted_highlights > 0 then entry.deleted_highlights = del.deleted_highlights end
        if #del.deleted_bookmarks > 0 then entry.deleted_bookmarks = del.deleted_bookmarks end
        local saved, perr = self:call("POST", Client.PREFIX .. "/progress", { entry })
        if not saved then return nil, perr end
        result.progress = saved
        for _, key in ipairs(del.deleted_highlights) do synced[key] = nil end
        for _, key in ipairs(del.deleted_bookmarks) do synced[key] = nil end
    end
    if opts.annotations ~= false then
        local lists, sent = { highlights = {}, notes = {}, bookmarks = {} }, {}
        for _, a in ipairs(book.annotations or {}) do
            local w = Client.to_wire(a, id.sha256)
            if w then
                local list = w.type == "bookmark" and "bookmarks" or (w.type == "note" and "notes" or "highlights")
                table.insert(lists[list], w)
                sent[w.dedup_key] = w.type
            end
        end
        local body = { book_uuid = uuid, book_sha256 = id.sha256 }
        local any = false
        for name, list in pairs(lists) do
            if #list > 0 then body[name] = list any = true end
        end
        if any then
            local answer, aerr = self:call("POST", Client.PREFIX .. "/bookmarks", body)
            if not answer then return nil, aerr end
            result.annotations = answer
            local refused = {}
            for _, x in ipairs(answer.ignored or {}) do
                if x.dedup_key then
                    refused[x.dedup_key] = true
                    -- deleted on the web: a stale copy here, to drop (never re-created)
                    if x.reason == "deleted on the server" then result.remove[#result.remove + 1] = x.dedup_key end
                end
            end
            for key, kind in pairs(sent) do
                if not refused[key] then synced[key] = kind end
            end
        end
    end
    return result
end

--- Pulls the server's state of the book: {uuid, meta, position (see decide_position) or nil,
--- position_reason, add, remove, synced} or nil, err.
function Client:pull(book, own_device_name)
    local uuid, err = self:book_uuid(book)
    if not uuid then return nil, err end
    local meta, merr = self:call("GET", Client.PREFIX .. "/metadata/" .. url_encode(uuid))
    if not meta then return nil, merr end
    local plan = Client.merge(book.annotations, meta, book.synced, book.has_pages)
    local position, reason = Client.decide_position(meta, book, own_device_name)
    return { uuid = uuid, meta = meta, position = position, position_reason = reason, add = plan.add, remove = plan.remove, synced = plan.synced }
end

return Client
