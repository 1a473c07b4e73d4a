# Quarantine: what a session has read decides what it may do next.
#
# data.servers[<server>].untrusted lists the tools whose results are outside
# content (a web page, a chat channel): such a result taints the session.
# data.servers[<server>].untrusted_resources lists glob patterns of resource
# URIs whose contents are outside content: reading one (resources/read) taints
# too, and so does reading any resource of a server whose untrusted list is
# "*". data.servers[<server>].outbound lists the tools that send data out
# (post a message, write a file): a tainted session may not call them until a
# person clears it. Each tool list holds tool names or "*" (every tool of the
# server); a single string ("*" or a name) works too: reading these lists
# leniently only ever taints or refuses more.
#
# Two switches make tainting stricter, never laxer:
#   data.untrusted_open_world (default false): a tool the untrusted list does
#     not name taints anyway when it declares openWorldHint: true. Annotations
#     come from the server, so they can only add taint, never remove it.
#   data.taint_on_injection (default true; false turns it off): a result in
#     which the injection detector found markers taints, whatever the lists say.
package airlock.rules.quarantine

import data.airlock.waivers

violations contains {
	"rule": "quarantine.outbound_after_taint",
	"message": sprintf(
		"the session is quarantined: %s. %v/%v can send data out, so it is refused until a person reviews the session and clears it with `airlock clear %v --reason ...`",
		[_taint_source, _server, tool, _session],
	),
} if {
	input.phase == "request"
	input.method == "tools/call"
	input.session.tainted == true
	tool := input.tool.name
	_listed(data.servers[input.server].outbound, tool)
}

# An error result is content the model reads as well, so it taints too.
taints contains {
	"rule": "quarantine.untrusted_result",
	"message": sprintf(
		"the %s of %v/%v is untrusted content: %s",
		[_result_kind, _server, tool, _quarantined],
	),
} if {
	input.phase == "response"
	input.method == "tools/call"
	tool := input.tool.name
	_listed(data.servers[input.server].untrusted, tool)
}

# A resource read: the server is wholly untrusted, or the URI matches one of
# its untrusted_resources patterns. Error responses taint too.
taints contains {
	"rule": "quarantine.untrusted_result",
	"message": sprintf(
		"the %s of resources/read on %v is untrusted content (%s): %s",
		[_result_kind, _server, reason, _quarantined],
	),
} if {
	input.phase == "response"
	input.method == "resources/read"
	reason := _untrusted_resource
}

# Opt-in: a tool that declares it reaches an open world (openWorldHint: true)
# taints even when the untrusted list does not name it. A tool the list names
# is left to quarantine.untrusted_result, whatever its annotations say.
taints contains {
	"rule": "quarantine.open_world_result",
	"message": sprintf(
		"the %s of %v/%v is untrusted content (the tool declares openWorldHint and untrusted_open_world is on): %s",
		[_result_kind, _server, tool, _quarantined],
	),
} if {
	input.phase == "response"
	input.method == "tools/call"
	data.untrusted_open_world == true
	tool := input.tool.name
	input.tool.annotations.openWorldHint == true
	not _untrusted_tool(tool)
}

# (`not _listed(data.servers[input.server].untrusted, tool)` would be
# undefined, not true, for a server that data.servers lacks.)
_untrusted_tool(tool) if _listed(data.servers[input.server].untrusted, tool)

# A result in which the injection detector found markers. The hits are
# signals, not the trust boundary, but a session that has read one has been
# exposed to it. The message names the kinds and paths, never the content.
taints contains {
	"rule": "quarantine.injection_marker",
	"message": sprintf(
		"the %s of %s carries prompt-injection markers (%s): %s",
		[_result_kind, _what, _injection_summary, _quarantined],
	),
} if {
	input.phase == "response"
	input.method in _content_methods
	not _injection_off
	_injection_found
}

# The responses this package acts on (see response_gate in decision.rego):
# untrusted tools' results, resources/read of a server with untrusted
# resources, open-world tools when that switch is on, and any content in
# which the injection detector found markers.
response_needs := {
	"tools": _listed_tools(object.get(_server_data, "untrusted", [])),
	"methods": [m | some m in ["resources/read"]; _has_untrusted_resources],
	"open_world": _open_world_on,
	"hits": [h | some h in ["injection"]; not _injection_off],
}

_open_world_on := true if data.untrusted_open_world == true

else := false

_server_data := data.servers[input.server] if is_object(data.servers[input.server])

else := {}

# A tool list as the gate reads it: "*" for every tool; names otherwise.
_listed_tools(list) := "*" if list == "*"

else := [list] if is_string(list)

else := list if is_array(list)

else := []

_has_untrusted_resources if _listed(_server_data.untrusted, "*")

_has_untrusted_resources if count(_resource_patterns) > 0

_quarantined := "the session is quarantined, and tools that send data out are refused until a person runs `airlock clear`"

_listed(list, _) if list == "*"

_listed(list, tool) if list == tool

_listed(list, tool) if {
	is_array(list)
	some entry in list
	entry in {"*", tool}
}

_server := input.server if is_string(input.server)

else := "?"

_session := input.session.id if is_string(input.session.id)

else := "SESSION"

# A JSON-RPC error reaches the policy as {"error": …} in place of the result.
_result_kind := "error result" if {
	input.result.isError == true
} else := "error response" if {
	_ = input.result.error
} else := "result"

# --- resources --------------------------------------------------------------

# Why a resources/read response is untrusted; undefined when it is not. A
# server whose untrusted list is (or holds) "*" is untrusted as a whole.
_untrusted_resource := "the server is wholly untrusted" if {
	_listed(data.servers[input.server].untrusted, "*")
} else := sprintf("its URI matches %q in untrusted_resources", [_resource_patterns[min(matched)]]) if {
	matched := {i | some i, p in _resource_patterns; _uri_matches(p)}
	count(matched) > 0
}

# The server's untrusted_resources, when it is a list (a single string is read
# as a list of one; anything else holds no patterns).
_resource_patterns := p if {
	p := data.servers[input.server].untrusted_resources
	is_array(p)
} else := [p] if {
	p := data.servers[input.server].untrusted_resources
	is_string(p)
} else := []

# "/" is the one delimiter: * and ? stay within a path segment, ** crosses
# them. A pattern outside valid_glob's safe subset (or not a string) never
# matches, so that glob.match cannot fail the decision.
_uri_matches(pattern) if {
	is_string(input.resource.uri)
	waivers.valid_glob(pattern)
	glob.match(pattern, ["/"], input.resource.uri)
}

# --- injection markers ------------------------------------------------------

_content_methods := {"tools/call", "resources/read", "prompts/get"}

# Only false turns it off: absent, null or anything else leaves it on.
_injection_off if data.taint_on_injection == false

_injection_found if {
	is_array(input.detectors.injection)
	count(input.detectors.injection) > 0
}

# Detector output that is not a list cannot be checked: it taints as well.
_injection_found if _injection_malformed

_injection_malformed if {
	hits := input.detectors.injection
	hits != null
	not is_array(hits)
}

_injection_summary := "the injection detector's output is not a list" if {
	_injection_malformed
} else := sprintf("kinds %s; at %s", [
	_summarize({_hit_field(h, "kind") | some h in input.detectors.injection}),
	_summarize({_hit_field(h, "path") | some h in input.detectors.injection}),
])

# A hit's kind or path (a JSON pointer into the result), or "?".
_hit_field(hit, field) := hit[field] if {
	is_object(hit)
	is_string(hit[field])
} else := "?"

# _summarize(set): at most _shown quoted values, in order, and how many more.
_summarize(values) := concat(", ", quoted) if {
	quoted := [sprintf("%q", [v]) | some v in sort(values)]
	count(quoted) <= _shown
} else := sprintf("%s and %d more", [
	concat(", ", [sprintf("%q", [v]) | some v in array.slice(sort(values), 0, _shown)]),
	count(values) - _shown,
])

_shown := 5

# What the response answers: server/tool for a tool call, else the method.
_what := sprintf("%v/%v", [_server, input.tool.name]) if {
	input.method == "tools/call"
	is_string(input.tool.name)
} else := sprintf("%v on %v", [input.method, _server])

# --- the outbound message ---------------------------------------------------

# What tainted the session: the first entry of input.session.taint.
_taint_source := sprintf(
	"it read untrusted content from %s at %v (decision %v%s)",
	[
		_origin(first),
		object.get(first, "at", "?"),
		object.get(first, "decision_id", "?"),
		_taint_rules(first),
	],
) if {
	first := input.session.taint[0]
	is_object(first)
} else := "it read untrusted content earlier"

# The taint rules that fired, when the record names them.
_taint_rules(record) := sprintf(", %s", [concat(", ", rules)]) if {
	rules := [r | some r in record.rules; is_string(r)]
	count(rules) > 0
} else := ""

# Where the tainting content came from: server/tool for a tool result, the
# server alone when the record names no tool (a resource or a prompt).
_origin(record) := sprintf("%v", [object.get(record, "server", "?")]) if {
	record.tool == ""
} else := sprintf("%v/%v", [object.get(record, "server", "?"), object.get(record, "tool", "?")])
