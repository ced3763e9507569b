local _ = require("gettext")
return {
    name = "bindery",
    fullname = _("Bindery sync"),
    description = _([[Syncs reading positions, highlights and bookmarks with a Bindery server. The device is registered once and approved in a browser.]]),
}
