package spec

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mlx5gen/mlx5gen/gen/diag"
)

// Pos is a position in a spec file.
type Pos = diag.Pos

// decoder turns yaml.Nodes into Go values strictly: unknown keys, missing
// required keys, duplicate keys and wrongly typed scalars are errors with the
// node's position. Struct fields are named by their yaml tag; a tag option
// "required" makes the key mandatory. A field `Pos Pos` with tag yaml:"-" is
// set to the position of the mapping it was decoded from.
type decoder struct {
	file string
	errs diag.List
}

func (d *decoder) pos(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errs = append(d.errs, &diag.Error{Pos: d.pos(n), Msg: fmt.Sprintf(format, args...)})
}

var (
	posType  = reflect.TypeFor[Pos]()
	nodeType = reflect.TypeFor[yaml.Node]()
)

// unmarshaler is implemented by types that decode themselves from a node.
type unmarshaler interface {
	decodeYAML(d *decoder, n *yaml.Node)
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value) {
	if n.Kind == yaml.AliasNode {
		d.errorf(n, "YAML aliases are not allowed in spec files")
		return
	}
	if v.Type() == nodeType {
		v.Set(reflect.ValueOf(*n)) // kept as YAML for whoever reads it
		return
	}
	if v.CanAddr() {
		if u, ok := v.Addr().Interface().(unmarshaler); ok {
			u.decodeYAML(d, n)
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem())
	case reflect.Struct:
		d.decodeStruct(n, v)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, "want a list, got %s", kindName(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			d.errorf(n, "want a mapping, got %s", kindName(n))
			return
		}
		m := reflect.MakeMap(v.Type())
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if seen[k.Value] {
				d.errorf(k, "duplicate key %q", k.Value)
				continue
			}
			seen[k.Value] = true
			kv := reflect.New(v.Type().Key()).Elem()
			d.decode(k, kv)
			ev := reflect.New(v.Type().Elem()).Elem()
			d.decode(val, ev)
			m.SetMapIndex(kv, ev)
		}
		v.Set(m)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.errorf(n, "want a string, got %s", kindName(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || (n.Value != "true" && n.Value != "false") {
			d.errorf(n, "want true or false, got %s", kindName(n))
			return
		}
		v.SetBool(n.Value == "true")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, err := d.int(n, v.Type().Bits())
		if err == nil {
			v.SetInt(x)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, err := d.uint(n, v.Type().Bits())
		if err == nil {
			v.SetUint(x)
		}
	default:
		d.errorf(n, "internal error: cannot decode into %s", v.Type())
	}
}

func (d *decoder) int(n *yaml.Node, bits int) (int64, error) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "want an integer, got %s", kindName(n))
		return 0, fmt.Errorf("not an integer")
	}
	x, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, bits)
	if err != nil {
		d.errorf(n, "want a %d-bit integer, got %q", bits, n.Value)
	}
	return x, err
}

func (d *decoder) uint(n *yaml.Node, bits int) (uint64, error) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "want an unsigned integer, got %s", kindName(n))
		return 0, fmt.Errorf("not an integer")
	}
	x, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, bits)
	if err != nil {
		d.errorf(n, "want an unsigned %d-bit integer, got %q", bits, n.Value)
	}
	return x, err
}

type fieldInfo struct {
	index    []int
	required bool
}

// structFields maps yaml keys to struct fields; a field tagged ",inline"
// contributes its own fields.
func structFields(t reflect.Type) (map[string]fieldInfo, []string) {
	fields := map[string]fieldInfo{}
	var names []string
	var add func(t reflect.Type, prefix []int)
	add = func(t reflect.Type, prefix []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			if tag == "-" || tag == "" || !f.IsExported() {
				continue
			}
			idx := append(append([]int(nil), prefix...), i)
			name, opts, _ := strings.Cut(tag, ",")
			if opts == "inline" && f.Type.Kind() == reflect.Struct {
				add(f.Type, idx)
				continue
			}
			fields[name] = fieldInfo{index: idx, required: opts == "required"}
			names = append(names, name)
		}
	}
	add(t, nil)
	return fields, names
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "want a mapping, got %s", kindName(n))
		return
	}
	t := v.Type()
	if f, ok := t.FieldByName("Pos"); ok && f.Type == posType {
		v.FieldByIndex(f.Index).Set(reflect.ValueOf(d.pos(n)))
	}
	fields, names := structFields(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		fi, ok := fields[k.Value]
		if !ok {
			d.errorf(k, "unknown key %q (known: %s)", k.Value, strings.Join(names, ", "))
			continue
		}
		if seen[k.Value] {
			d.errorf(k, "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		d.decode(val, v.FieldByIndex(fi.index))
	}
	for _, name := range names {
		if fields[name].required && !seen[name] {
			d.errorf(n, "missing required key %q", name)
		}
	}
}

// decodeFile parses one YAML document and decodes it into v. A second
// document is an error: it would be silently ignored, keys and all.
func decodeFile(file string, data []byte, v any) diag.List {
	d := &decoder{file: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return diag.List{yamlSyntaxError(file, err)}
	}
	if len(doc.Content) == 0 {
		return diag.List{{Pos: Pos{File: file, Line: 1, Col: 1}, Msg: "empty spec file"}}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == io.EOF:
	case err != nil:
		return diag.List{yamlSyntaxError(file, err)}
	default:
		return diag.List{{Pos: d.pos(&next), Msg: "a second YAML document; a spec file holds one (remove the ---)"}}
	}
	d.decode(doc.Content[0], reflect.ValueOf(v).Elem())
	return d.errs
}

// yamlSyntaxError turns yaml.v3's "yaml: line N: msg" into file:line:col.
func yamlSyntaxError(file string, err error) *diag.Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if l, err := strconv.Atoi(num); err == nil {
				line, msg = l, tail
			}
		}
	}
	return &diag.Error{Pos: Pos{File: file, Line: line, Col: 1}, Msg: "YAML syntax: " + msg}
}
