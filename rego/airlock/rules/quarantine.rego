# Quarantine: what a session has read decides what it may do next.
#
# data.servers[<server>].untrusted lists the tools whose results are outside
# content (a web page, a chat channel): such a result taints the session.
# data.servers[<server>].outbound lists the tools that send data out (post a
# message, write a file): a tainted session may not call them until a person
# clears it. Each list holds tool names or "*" (every tool of the server); a
# single string ("*" or a name) works too: reading these lists leniently only
# ever taints or refuses more.
package airlock.rules.quarantine

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
		"the %s of %v/%v is untrusted content: the session is quarantined, and tools that send data out are refused until a person runs `airlock clear`",
		[_result_kind, _server, tool],
	),
} if {
	input.phase == "response"
	input.method == "tools/call"
	tool := input.tool.name
	_listed(data.servers[input.server].untrusted, tool)
}

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

_result_kind := "error result" if input.result.isError == true

else := "result"

# What tainted the session: the first entry of input.session.taint.
_taint_source := sprintf(
	"it read untrusted content from %v/%v at %v (decision %v)",
	[
		object.get(first, "server", "?"),
		object.get(first, "tool", "?"),
		object.get(first, "at", "?"),
		object.get(first, "decision_id", "?"),
	],
) if {
	first := input.session.taint[0]
	is_object(first)
} else := "it read untrusted content earlier"
