package cheader

import (
	"reflect"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// cc/v4 keeps only some attributes on its types and computes layouts without
// __attribute__((packed)), so the model reads the attributes off the syntax
// tree itself and does its own layout.

// attrs is the set of GNU attributes written on one declaration, with their
// arguments. Names are normalised: __packed__ and packed are both "packed".
type attrs map[string][]cc.Value

func (a attrs) has(name string) bool { _, ok := a[name]; return ok }

// aligned returns N of aligned(N), 0 if absent, and -1 for a bare
// __attribute__((aligned)) (the target's biggest alignment).
func (a attrs) aligned() int64 {
	v, ok := a["aligned"]
	if !ok {
		return 0
	}
	if len(v) == 0 {
		return -1
	}
	switch x := v[0].(type) {
	case cc.Int64Value:
		return int64(x)
	case cc.UInt64Value:
		return int64(x)
	}
	return -1
}

func normAttr(s string) string {
	if strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__") && len(s) > 4 {
		return s[2 : len(s)-2]
	}
	return s
}

func (a attrs) addList(l *cc.AttributeSpecifierList) {
	for ; l != nil; l = l.AttributeSpecifierList {
		if l.AttributeSpecifier == nil {
			continue
		}
		for v := l.AttributeSpecifier.AttributeValueList; v != nil; v = v.AttributeValueList {
			av := v.AttributeValue
			if av == nil {
				continue
			}
			var args []cc.Value
			for e := av.ArgumentExpressionList; e != nil; e = e.ArgumentExpressionList {
				if e.AssignmentExpression != nil {
					args = append(args, e.AssignmentExpression.Value())
				}
			}
			a[normAttr(av.Token.SrcStr())] = args
		}
	}
}

var (
	attrListType   = reflect.TypeFor[*cc.AttributeSpecifierList]()
	recordSpecType = reflect.TypeFor[*cc.StructOrUnionSpecifier]()
	enumSpecType   = reflect.TypeFor[*cc.EnumSpecifier]()
	tokenType      = reflect.TypeFor[cc.Token]()
	alignasType    = reflect.TypeFor[*cc.AlignmentSpecifier]()
)

// declAttrs collects every attribute and _Alignas written in the subtree of
// n, without entering struct, union or enum definitions: those belong to the
// nested type, not to the declaration.
func declAttrs(n any) (attrs, []*cc.AlignmentSpecifier) {
	a := attrs{}
	var alignas []*cc.AlignmentSpecifier
	var walk func(v reflect.Value, root bool)
	walk = func(v reflect.Value, root bool) {
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem(), false)
			}
		case reflect.Pointer:
			if v.IsNil() {
				return
			}
			t := v.Type()
			if t == attrListType {
				a.addList(v.Interface().(*cc.AttributeSpecifierList))
				return
			}
			if t == alignasType {
				alignas = append(alignas, v.Interface().(*cc.AlignmentSpecifier))
				return
			}
			if !root && (t == recordSpecType || t == enumSpecType) {
				if s, ok := v.Interface().(*cc.StructOrUnionSpecifier); ok && s.StructDeclarationList == nil {
					// A reference such as "struct foo __attribute__((x)) m;":
					// its attributes apply to the declaration.
					a.addList(s.AttributeSpecifierList)
				}
				return
			}
			if t.Elem().Kind() == reflect.Struct {
				walk(v.Elem(), false)
			}
		case reflect.Struct:
			for _, i := range nodeFields(v.Type()) {
				walk(v.Field(i), false)
			}
		}
	}
	walk(reflect.ValueOf(n), true)
	return a, alignas
}

// nodeFieldCache maps a syntax tree node's struct type to nodeFields.
var nodeFieldCache sync.Map // reflect.Type -> []int

// nodeFields lists the fields of a node's struct type that can lead to
// other nodes: exported interfaces, pointers and structs other than
// tokens. Computed once per type: reflect allocates for every Field call,
// and the model walks the declarations of the whole translation unit.
func nodeFields(t reflect.Type) []int {
	if f, ok := nodeFieldCache.Load(t); ok {
		return f.([]int)
	}
	var list []int
	if t != tokenType {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			switch f.Type.Kind() {
			case reflect.Interface, reflect.Pointer, reflect.Struct:
				if f.IsExported() {
					list = append(list, i)
				}
			}
		}
	}
	nodeFieldCache.Store(t, list)
	return list
}

// recordAttrs returns the attributes of a struct or union definition:
// "struct __attribute__((x)) tag { ... } __attribute__((y))".
func recordAttrs(s *cc.StructOrUnionSpecifier) attrs {
	a := attrs{}
	a.addList(s.AttributeSpecifierList)
	a.addList(s.AttributeSpecifierList2)
	return a
}

// visit calls f for every node in the tree under n, in source order.
func visit(n any, f func(any)) {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Pointer:
			if v.IsNil() || v.Type().Elem().Kind() != reflect.Struct {
				return
			}
			f(v.Interface())
			walk(v.Elem())
		case reflect.Struct:
			if v.Type() == tokenType {
				return
			}
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(n))
}
