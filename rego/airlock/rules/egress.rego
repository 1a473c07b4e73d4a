# Egress: where the arguments of a tool call may point.
#
# data.allow_hosts lists the hosts a call may name: exact hosts, or
# "*.example.com" for every subdomain of example.com at any depth (not
# example.com itself). Absent (or null): the rule is off. []: every host is
# refused. The Go detectors put every host they find in the arguments in
# input.detectors.hosts, already normalised (lower case, no trailing dot, no
# port or userinfo).
package airlock.rules.egress

violations contains object.union(
	{
		"rule": "egress.host_not_allowed",
		"message": sprintf(
			"host %q in argument %q is not in allow_hosts; to allow it, add it to allow_hosts or add a waiver for egress.host_not_allowed",
			[host, _argument(hit)],
		),
	},
	_path(hit),
) if {
	input.phase == "request"
	input.method == "tools/call"
	data.allow_hosts != null
	some hit in input.detectors.hosts
	host := _host(hit)
	not _allowed(host)
}

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

_allowed(host) if host in _exact

_allowed(host) if {
	is_string(host)
	some s in _suffixes
	endswith(host, s)
}

# A hit without a host string is refused too, under its raw form.
_host(hit) := hit.host if is_string(hit.host)

else := sprintf("%v", [hit])

# The argument a hit is in, as the dotted path a waiver's match uses.
_argument(hit) := data.airlock.waivers.argument_path(hit.path) if is_string(hit.path)

else := "?"

# The JSON pointer of the argument, so that a waiver's match must cover it.
_path(hit) := {"path": hit.path} if is_string(hit.path)

else := {}
