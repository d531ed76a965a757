package sq

import (
	"reflect"
	"testing"
)

// TestChecksCopiesEveryField: the checker sees every capability of the QP
// it checks, with the value the writer was given; only MaxPost, which the
// writer counts against, stays with the writer.
func TestChecksCopiesEveryField(t *testing.T) {
	var qp QP
	v := reflect.ValueOf(&qp).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int32, reflect.Int64:
			f.SetInt(int64(100 + i))
		default:
			f.SetUint(uint64(100 + i))
		}
	}
	c := reflect.ValueOf(qp.checks()).Elem()
	seen := map[string]bool{}
	for i := range c.NumField() {
		name := c.Type().Field(i).Name
		seen[name] = true
		src := v.FieldByName(name)
		if !src.IsValid() {
			t.Errorf("the checker's QP has %s, sq.QP has not", name)
			continue
		}
		if !reflect.DeepEqual(src.Interface(), c.Field(i).Interface()) {
			t.Errorf("%s: the checker sees %v, the writer was given %v", name, c.Field(i), src)
		}
	}
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; !seen[name] && name != "MaxPost" {
			t.Errorf("sq.QP.%s does not reach the checker", name)
		}
	}
}
