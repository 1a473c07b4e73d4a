package pep

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/airlock-dev/airlock/detectors"
)

// toolCatalog remembers what the server last said about its tools: their
// annotations (for the policy) and the formats their input schemas give
// arguments (a "format": "uri" property is a destination for the host
// detector).
type toolCatalog struct {
	mu    sync.RWMutex
	tools map[string]toolMeta
}

type toolMeta struct {
	annotations map[string]any
	formats     map[string]string // JSON pointer of an argument -> format
}

// maxSchemaDepth bounds the walk of an input schema: schemas are the
// server's, and a deep one must not cost more than a shallow one.
const maxSchemaDepth = 8

// update merges a tools/list page into the catalog. Pages add up, and a tool
// that disappears keeps what was last said of it: it can only make a policy
// stricter. Values are decoded afresh because result views a reused buffer.
func (c *toolCatalog) update(result gjson.Result) {
	next := make(map[string]toolMeta)
	result.Get("tools").ForEach(func(_, tool gjson.Result) bool {
		name := tool.Get("name")
		if name.Type != gjson.String {
			return true
		}
		var meta toolMeta
		if raw := tool.Get("annotations").Raw; raw != "" {
			_ = json.Unmarshal([]byte(raw), &meta.annotations) // not an object: no annotations
		}
		formats := map[string]string{}
		schemaFormats(tool.Get("inputSchema"), "", formats, 0)
		if len(formats) > 0 {
			meta.formats = formats
		}
		next[strings.Clone(name.Str)] = meta
		return true
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tools == nil {
		c.tools = make(map[string]toolMeta)
	}
	for k, v := range next {
		c.tools[k] = v
	}
}

// schemaFormats records the "format" of every property of an object schema,
// by the JSON pointer of the argument; array items share their array's
// pointer, as the detectors expect.
func schemaFormats(schema gjson.Result, pointer string, out map[string]string, depth int) {
	if depth > maxSchemaDepth || !schema.IsObject() {
		return
	}
	if f := schema.Get("format"); f.Type == gjson.String && pointer != "" {
		out[pointer] = strings.Clone(f.Str)
	}
	if items := schema.Get("items"); items.IsObject() {
		schemaFormats(items, pointer, out, depth+1)
	}
	schema.Get("properties").ForEach(func(key, prop gjson.Result) bool {
		schemaFormats(prop, pointer+"/"+detectors.EscapePointer(key.String()), out, depth+1)
		return true
	})
}

func (c *toolCatalog) lookup(name string) toolMeta {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tools[name]
}
