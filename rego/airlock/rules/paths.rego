# Paths: files a tool call may not name.
#
# The globs are data.protected_paths (every server) plus
# data.servers[<server>].protected_paths (calls to that server), doublestar
# syntax, "~/" for the home directory. The policy does not read them: the Go
# paths detector normalises every path it finds in the arguments ("~" and
# $HOME expanded, "." and ".." resolved, file:// URLs decoded) and lists the
# globs each one matches in input.detectors.paths[_].protected, as the policy
# wrote them. A hit's "arg" is the JSON pointer of the argument; its "path"
# is the normalised file path.
package airlock.rules.paths

import data.airlock.waivers

# This package judges requests only: it needs no response decided (see
# response_gate in decision.rego).
response_needs := {}

violations contains object.union(
	{
		"rule": "paths.protected",
		"message": sprintf(
			"argument %q%s names a protected path: it matches %s in protected_paths. To allow it, narrow the glob in protected_paths (or servers.%v.protected_paths), or add a waiver for paths.protected",
			[_argument(hit), _decoded(hit), _summarize(globs), _server],
		),
	},
	_pointer(hit),
) if {
	input.phase == "request"
	input.method == "tools/call"
	some hit in input.detectors.paths
	globs := _globs(hit)
	count(globs) > 0
}

# Detector output that is not a list cannot be checked: refused as well.
violations contains {
	"rule": "paths.protected",
	"message": "the paths detector's output is not a list, so the arguments cannot be checked for protected paths",
} if {
	input.phase == "request"
	input.method == "tools/call"
	hits := input.detectors.paths
	hits != null
	not is_array(hits)
}

# The protected globs a hit matched. A list is what the Go side sends. A hit
# that is not an object, or a protected that is a non-empty string or
# anything else but null, false or empty, is malformed output and counts as
# protected ("?"): it refuses, never allows.
_globs(hit) := {"?"} if {
	not is_object(hit)
} else := {_string(g) | some g in hit.protected} if {
	is_array(hit.protected)
} else := {hit.protected} if {
	is_string(hit.protected)
	hit.protected != ""
} else := {"?"} if {
	p := hit.protected
	not p in {null, false, "", {}}
} else := set()

_string(s) := s if is_string(s)

else := "?"

# The message names the glob and the argument, never the path as written:
# an argument may be a whole command line, and may hold a secret.
_argument(hit) := waivers.argument_path(hit.arg) if is_string(hit.arg)

else := "?"

# The JSON pointer of the argument, so that a waiver's match must cover it.
_pointer(hit) := {"path": hit.arg} if is_string(hit.arg)

else := {}

_decoded(hit) := sprintf(" (decoded from %s)", [hit.decoded]) if {
	is_string(hit.decoded)
	hit.decoded != ""
}

else := ""

_server := input.server if is_string(input.server)

else := "<server>"

# _summarize(set): at most _shown quoted values, in order, and how many more.
_summarize(values) := concat(", ", quoted) if {
	quoted := [sprintf("%q", [v]) | some v in sort(values)]
	count(quoted) <= _shown
} else := sprintf("%s and %d more", [
	concat(", ", [sprintf("%q", [v]) | some v in array.slice(sort(values), 0, _shown)]),
	count(values) - _shown,
])

_shown := 5
