# Secrets: a secret may not leave through a tool that sends data out.
#
# data.servers[<server>].outbound lists the tools that send data out (post a
# message, send a mail, upload a file), as for the quarantine: tool names or
# "*", or a single string. A call to such a tool whose arguments carry a
# secret (a hit of the Go secrets detector in input.detectors.secrets) is
# refused, on a clean session too. One violation per argument, naming the
# kinds and the redacted forms the detector reports, never the secret.
package airlock.rules.secrets

import data.airlock.waivers

# This package judges requests only: it needs no response decided (see
# response_gate in decision.rego).
response_needs := {}

violations contains object.union(
	{
		"rule": "secrets.outbound",
		"message": sprintf(
			"argument %q carries a secret (kinds %s; redacted %s%s), and %v/%v sends data out (servers.%v.outbound lists it). Remove the secret from the call; if it must be sent, add a waiver for secrets.outbound with a match on this argument",
			[
				_argument(pointer),
				_summarize({_field(h, "kind") | some h in hits}),
				_summarize({_field(h, "redacted") | some h in hits}),
				_decoded(hits),
				_server, tool, _server,
			],
		),
	},
	_pointer(pointer),
) if {
	input.phase == "request"
	input.method == "tools/call"
	some pointer, hits in _by_argument # first: most calls carry no secret
	tool := input.tool.name
	_listed(data.servers[input.server].outbound, tool)
}

# Detector output that is not a list cannot be checked: refused as well.
violations contains {
	"rule": "secrets.outbound",
	"message": sprintf(
		"the secret detector's output is not a list, so the arguments of %v/%v cannot be checked, and it sends data out (servers.%v.outbound lists it)",
		[_server, tool, _server],
	),
} if {
	input.phase == "request"
	input.method == "tools/call"
	hits := input.detectors.secrets
	hits != null
	not is_array(hits)
	tool := input.tool.name
	_listed(data.servers[input.server].outbound, tool)
}

# The secret hits, grouped by the JSON pointer of their argument ("" for a
# hit without one).
_by_argument[pointer] := hits if {
	is_array(input.detectors.secrets)
	count(input.detectors.secrets) > 0
	some pointer in {_hit_pointer(h) | some h in input.detectors.secrets}
	hits := {h | some h in input.detectors.secrets; _hit_pointer(h) == pointer}
}

_hit_pointer(hit) := hit.path if is_string(hit.path)

else := ""

_listed(list, _) if list == "*"

_listed(list, tool) if list == tool

_listed(list, tool) if {
	is_array(list)
	some entry in list
	entry in {"*", tool}
}

_argument("") := "?"

_argument(pointer) := waivers.argument_path(pointer) if pointer != ""

# The JSON pointer of the argument, so that a waiver's match must cover it.
_pointer("") := {}

_pointer(pointer) := {"path": pointer} if pointer != ""

# A hit's kind or redacted form, or "?".
_field(hit, name) := hit[name] if {
	is_object(hit)
	is_string(hit[name])
} else := "?"

_decoded(hits) := sprintf("; decoded from %s", [concat(", ", sort(d))]) if {
	d := {h.decoded | some h in hits; is_string(h.decoded); h.decoded != ""}
	count(d) > 0
} else := ""

_server := input.server if is_string(input.server)

else := "?"

# _summarize(set): at most _shown quoted values, in order, and how many more.
_summarize(values) := concat(", ", quoted) if {
	quoted := [sprintf("%q", [v]) | some v in sort(values)]
	count(quoted) <= _shown
} else := sprintf("%s and %d more", [
	concat(", ", [sprintf("%q", [v]) | some v in array.slice(sort(values), 0, _shown)]),
	count(values) - _shown,
])

_shown := 5
