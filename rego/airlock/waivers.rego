# Waivers: data.waivers, one object per exception a person approved.
#
#   {"id": "W-2026-014", "rule": "egress.host_not_allowed",
#    "server": "web", "tool": "fetch",                       # optional; "*" = any
#    "match": {"url": "https://docs.internal.example/*"},    # optional
#    "expires": "2027-01-31",                                # or an RFC 3339 timestamp
#    "reason": "…", "approved_by": "…"}
#
# The Go side evaluates with strict builtin errors: one builtin error fails the
# whole decision (and so every call). Everything read from a waiver is
# therefore checked before a builtin sees it, and a malformed waiver is simply
# never applied; `invalid` lists it with the problem, for tooling.
package airlock.waivers

# Waivers, when data.waivers is a list. Anything else holds no waivers.
_waivers := data.waivers if is_array(data.waivers)

else := []

# invalid lists every malformed waiver and why. A malformed waiver never
# waives anything and is never reported as expired.
invalid contains {"index": i, "waiver": _label(_waivers[i]), "problem": p} if {
	some [i, p] in _problems
}

_label(w) := w.id if {
	is_object(w)
	is_string(w.id)
} else := null

# _problems: [index, problem] for each problem of each waiver.
_problems contains [i, "a waiver must be an object"] if {
	some i, w in _waivers
	not is_object(w)
}

_problems contains [i, p] if {
	some i, w in _waivers
	is_object(w)
	some field, p in _required
	not _nonempty_string(object.get(w, field, null))
}

_problems contains [i, sprintf("%s must be a string", [field])] if {
	some i, w in _waivers
	is_object(w)
	some field in ["server", "tool"]
	not is_string(object.get(w, field, "*"))
}

_problems contains [i, p] if {
	some i, w in _waivers
	is_object(w)
	not _valid_match(object.get(w, "match", {}))
	p := "match must be an object of argument path to glob pattern (a string using only literals, escapes, *, **, ?, [classes] and {alternatives} without nesting)"
}

_problems contains [i, p] if {
	some i, w in _waivers
	is_object(w)
	_nonempty_string(object.get(w, "expires", null))
	not _ends[i]
	p := sprintf("expires %q is neither a date (YYYY-MM-DD) nor an RFC 3339 timestamp", [w.expires])
}

_required := {
	"id": "id must be a non-empty string",
	"rule": "rule must be a non-empty string",
	"expires": "expires must be a non-empty string",
	"reason": "reason must be a non-empty string",
	"approved_by": "approved_by must be a non-empty string",
}

_nonempty_string(s) if {
	is_string(s)
	s != ""
}

_valid_match(m) if {
	is_object(m)
	every k, pattern in m {
		is_string(k)
		valid_glob(pattern)
	}
}

# valid_glob(p) holds when glob.match can compile p without an error. It
# accepts a conservative subset of the glob syntax: literals, backslash
# escapes, * and ** (with no delimiters both match any run of characters,
# "/" and "." included), ?, character classes [abc] [!abc] [a-z], and
# alternatives {a,b} that contain no brackets or braces. Whether a pattern
# compiles does not depend on the delimiters: the quarantine rules use it for
# untrusted_resources, matched with "/" as the delimiter.
valid_glob(p) if {
	is_string(p)
	not regex.match(`\x{FFFD}`, p) # invalid UTF-8 reads as U+FFFD; glob.match fails on it
	regex.match(_glob_re, p)
	every r in regex.find_all_string_submatch_n(_glob_range_re, p, -1) {
		r[1] <= r[2] # [lo-hi] needs lo <= hi
	}
}

# One token of the subset: escape, range class, text class, alternatives,
# run of literals. TestValidGlob and FuzzValidGlob in rego_test.go check that
# glob.match compiles every pattern valid_glob accepts.
_glob_re := `^(?s)(?:\\.|\[!?[^\]\\!\-]-[^\]\\\-]\]|\[!?[^\]\\!\-](?:[^\]\\\-](?:[^\]\\]|\\.)*)?\]|\{(?:[^\\\[\]{}]|\\.)*\}|[^\\\[{]+)*$`

_glob_range_re := `\[!?([^\]\\!\-])-([^\]\\\-])\]`

# Waivers that are well formed.
_valid contains i if {
	some i, _ in _waivers
	not i in _invalid
}

_invalid := {i | some [i, _] in _problems}

# Valid waivers whose server, tool and match fit this call.
_in_scope contains i if {
	some i in _valid
	w := _waivers[i]
	_server_ok(object.get(w, "server", "*"))
	_tool_ok(object.get(w, "tool", "*"))
	_match_ok(object.get(w, "match", {}))
}

_server_ok(s) if s == "*"

_server_ok(s) if s == input.server

_tool_ok(t) if t == "*"

_tool_ok(t) if t == input.tool.name

_match_ok(m) if {
	every k, pattern in m {
		is_object(input.arguments)
		value := object.get(input.arguments, split(k, "."), null)
		is_string(value)
		glob.match(pattern, null, value) # null: no delimiters
	}
}

# live and expired: in-scope waivers, split by input.now. With no valid
# input.now neither holds, so no waiver applies.
live contains i if {
	some i in _in_scope
	_now_ns < _ends[i]
}

expired contains i if {
	some i in _in_scope
	_now_ns >= _ends[i]
}

# covers(i, v): waiver i is about violation v. A violation may name the
# argument it is about with "path" (a JSON pointer, as detector hits do); then
# a waiver with a match must match that very argument, so that vouching for
# arguments.url does not also let through a host found in another argument.
covers(i, v) if {
	w := _waivers[i]
	w.rule == v.rule
	_argument_ok(object.get(w, "match", {}), v)
}

_argument_ok(m, _) if count(m) == 0

_argument_ok(_, v) if not _names_argument(v)

_argument_ok(m, v) if {
	_names_argument(v)
	_ = m[argument_path(v.path)]
}

# (`not is_string(v.path)` would be undefined, not true, when v has no path.)
_names_argument(v) if is_string(v.path)

# argument_path turns a JSON pointer into the dotted path a waiver's match
# uses: "/options/endpoint" -> "options.endpoint".
argument_path(pointer) := concat(".", [seg |
	some raw in split(trim_prefix(pointer, "/"), "/")
	seg := replace(replace(raw, "~1", "/"), "~0", "~")
])

# --- time -------------------------------------------------------------------

# _ends[i]: when waiver i stops applying, in ns since the epoch. No entry when
# its expires is malformed.
_ends[i] := _end_ns(w.expires) if {
	some i, w in _waivers
	is_object(w)
}

_now_ns := time.parse_rfc3339_ns(input.now) if {
	[year, date_only] := _parse(input.now)
	date_only == false # a timestamp
	year >= _first_ns_year
	year <= _last_ns_year
}

# _end_ns(s): the first instant at which a waiver that expires at s no longer
# applies. A date is valid through the end of that day UTC. Undefined when s
# is malformed. Years past what nanoseconds can hold never expire; years
# before that have expired.
_end_ns(s) := _end_ns_of(s, year, date_only) if [year, date_only] := _parse(s)

_end_ns_of(_, year, _) := _max_ns if year > _last_ns_year

_end_ns_of(_, year, _) := _min_ns if year < _first_ns_year

_end_ns_of(s, year, true) := time.parse_rfc3339_ns(concat("", [s, "T00:00:00Z"])) + _day_ns if {
	year >= _first_ns_year
	year <= _last_ns_year
}

_end_ns_of(s, year, false) := time.parse_rfc3339_ns(s) if {
	year >= _first_ns_year
	year <= _last_ns_year
}

_day_ns := 86400000000000 # 24 h

_max_ns := 9223372036854775807

_min_ns := -9223372036854775808

# time.parse_rfc3339_ns fails outside 1677-09-21..2262-04-11. Any offset moves
# an instant by less than a day, so these whole years are always safe.
_first_ns_year := 1678

_last_ns_year := 2261

# _parse(s): [year, date_only] when s is a date (YYYY-MM-DD) or an RFC 3339
# timestamp that Go's parser accepts (years from 1000 on), with the day checked
# against the month, so that time.parse_rfc3339_ns cannot fail on it.
_parse(s) := [year, m[4] == ""] if {
	is_string(s)
	[m] := regex.find_all_string_submatch_n(_time_re, s, 1)
	year := to_number(m[1]) # [1-9][0-9]{3}: no leading zero
	m[3] <= _days_in_month(year, m[2]) # two-digit strings compare as numbers
}

_time_re := `^([1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9]))?$`

_days_in_month(_, m) := "31" if m in {"01", "03", "05", "07", "08", "10", "12"}

_days_in_month(_, m) := "30" if m in {"04", "06", "09", "11"}

_days_in_month(y, "02") := "29" if _leap(y)

_days_in_month(y, "02") := "28" if not _leap(y)

_leap(y) if {
	y % 4 == 0
	y % 100 != 0
}

_leap(y) if y % 400 == 0
