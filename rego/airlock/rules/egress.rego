# Egress: where the arguments of a tool call may point.
#
# data.allow_hosts lists the hosts a call may send to or fetch from: exact
# hosts, or "*.example.com" for every subdomain of example.com at any depth
# (not example.com itself). Absent (or null): egress.host_not_allowed is off.
# []: every host is refused. Entries are compared lower case with the ASCII
# form of a host, so an internationalised name must be listed in punycode
# ("xn--bcher-kva.example", not "bücher.example"); Rego cannot convert it.
#
# The Go detectors put every host they find in the arguments in
# input.detectors.hosts, normalised (lower case, ASCII/punycode, no trailing
# dot, port or userinfo): URLs, bare hostnames, email domains, IP literals,
# git remotes, the targets of network commands. A hit with
# "destination": true is a place the call sends to or fetches from (a URL
# field, a "to" address, a schema format of uri/email/hostname, a command's
# target); "destination": false is a mention in prose, which is text, not
# egress, and is not checked. A hit without a boolean destination is judged
# as a destination: malformed detector output refuses rather than allows.
# "lookalike": true marks a host whose Unicode form mixes scripts.
package airlock.rules.egress

# This package judges requests only: it needs no response decided (see
# response_gate in decision.rego).
response_needs := {}

violations contains object.union(
	{
		"rule": "egress.host_not_allowed",
		"message": sprintf(
			"host %q (%s) in argument %q%s is not in allow_hosts; to allow it, add it to allow_hosts or add a waiver for egress.host_not_allowed",
			[host, _kind(hit), _argument(hit), _decoded(hit)],
		),
	},
	_path(hit),
) if {
	input.phase == "request"
	input.method == "tools/call"
	data.allow_hosts != null
	some hit in input.detectors.hosts
	_destination(hit)
	host := _host(hit)
	not _allowed(host)
}

# A destination whose Unicode form mixes scripts (Cyrillic "а" in "аpple.com")
# is refused whatever allow_hosts says, unless allow_hosts lists its ASCII
# form exactly: a wildcard entry does not vouch for a lookalike. This rule
# does not depend on allow_hosts being set.
violations contains object.union(
	{
		"rule": "egress.lookalike_host",
		"message": sprintf(
			"host %q%s (%s) in argument %q%s mixes scripts and looks like another name; check where it really points. To allow it, add %q to allow_hosts exactly, or add a waiver for egress.lookalike_host",
			[host, _shown_as(hit), _kind(hit), _argument(hit), _decoded(hit), host],
		),
	},
	_path(hit),
) if {
	input.phase == "request"
	input.method == "tools/call"
	some hit in input.detectors.hosts
	hit.lookalike == true
	_destination(hit)
	host := _host(hit)
	not host in _exact
}

# Only an explicit false makes a hit a mention.
_destination(hit) if not _mention(hit)

_mention(hit) if hit.destination == false

# Allow-list entries, lower-cased and without a trailing dot. Entries that are
# not strings are ignored; a list that is not a list allows nothing.
_entries contains e if {
	is_array(data.allow_hosts)
	some raw in data.allow_hosts
	is_string(raw)
	e := trim_suffix(lower(raw), ".")
}

_exact contains e if {
	some e in _entries
	not startswith(e, "*.")
}

# "*.example.com" -> ".example.com". ("*" and "*." are exact entries that no
# host equals; "*.." would leave "." and is ignored.)
_suffixes contains s if {
	some e in _entries
	startswith(e, "*.")
	s := substring(e, 1, -1)
	s != "."
}

# Whether host is allowed. The common case, an allowed host, is settled by
# membership tests: an entry written exactly as the (normalized) host, or a
# wildcard on one of its parent domains. Only when both miss are the entries
# normalized and walked (an entry in other case, or with a trailing dot). The
# else chain keeps the walk from running when a fast path already answered.
_allowed(host) if {
	is_array(data.allow_hosts)
	host in data.allow_hosts
} else := true if {
	_parent_wildcard_listed(host)
} else := true if {
	host in _exact
} else := true if {
	is_string(host)
	some s in _suffixes
	endswith(host, s)
}

_parent_wildcard_listed(host) if {
	is_array(data.allow_hosts)
	is_string(host)
	labels := split(host, ".")
	not "" in labels # a host the detectors normalized has no empty label
	n := count(labels)
	n > 1
	some i in numbers.range(1, n - 1)
	concat(".", array.concat(["*"], array.slice(labels, i, n))) in data.allow_hosts
}

# A hit without a host string is refused too, under its raw form.
_host(hit) := hit.host if is_string(hit.host)

else := sprintf("%v", [hit])

# How the host was written, in words.
_kinds := {
	"url": "in a URL",
	"hostname": "a hostname",
	"email": "the domain of an email address",
	"ip": "an IP address",
	"split": "assembled from several fields",
	"git": "a git remote",
	"command": "the target of a network command",
}

_kind(hit) := k if k := _kinds[hit.kind]

else := sprintf("kind %q", [hit.kind]) if is_string(hit.kind)

else := "kind unknown"

# The Unicode form of an internationalised host, for the person reading.
_shown_as(hit) := sprintf(" (shown as %q)", [hit.unicode]) if {
	is_string(hit.unicode)
	hit.unicode != ""
}

else := ""

_decoded(hit) := sprintf(" (decoded from %s)", [hit.decoded]) if {
	is_string(hit.decoded)
	hit.decoded != ""
}

else := ""

# The argument a hit is in, as the dotted path a waiver's match uses.
_argument(hit) := data.airlock.waivers.argument_path(hit.path) if is_string(hit.path)

else := "?"

# The JSON pointer of the argument, so that a waiver's match must cover it.
_path(hit) := {"path": hit.path} if is_string(hit.path)

else := {}
